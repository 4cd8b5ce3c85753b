package streamdata

import (
	"bytes"
	"context"
	"sort"

	"svc/storage"
)

// scanPager serves stream pages on an engine without a StreamPager (the
// memory engine): the same search plan as a scan of the snapshot at the
// point in time, sorted by range value then id, then paged by keyset.
type scanPager struct{ s storage.Searcher }

func rangeValue(e *storage.Entity, k *storage.SortKey) storage.SortValue {
	if k.Field == storage.SortData {
		return storage.DataSortValue(e.Data, k)
	}
	return storage.MetaSortValue(e, k)
}

// cmpMark orders (v, id) against mk in the stream's direction.
func cmpMark(k *storage.SortKey, v storage.SortValue, id [16]byte, mk *storage.StreamMark) int {
	if c := storage.CompareSort(k, v, mk.Value); c != 0 {
		return c
	}
	c := bytes.Compare(id[:], mk.ID[:])
	if k.Desc {
		return -c
	}
	return c
}

func (p scanPager) StreamPage(ctx context.Context, q *storage.StreamQuery, fn func(e *storage.Entity, m storage.StreamMark) error) error {
	sq := q.Search
	sq.Sort, sq.Max = nil, 0
	es, err := p.s.Search(ctx, &sq)
	if err != nil {
		return err
	}
	type row struct {
		e *storage.Entity
		v storage.SortValue
	}
	rows := make([]row, 0, len(es))
	for _, e := range es {
		v := rangeValue(e, &q.Range)
		if v.Missing {
			continue
		}
		rows = append(rows, row{e, v})
	}
	k := &q.Range
	sort.Slice(rows, func(i, j int) bool {
		mk := storage.StreamMark{Value: rows[j].v, ID: rows[j].e.ID}
		return cmpMark(k, rows[i].v, rows[i].e.ID, &mk) < 0
	})
	start := 0
	if q.After != nil {
		start = sort.Search(len(rows), func(i int) bool { return cmpMark(k, rows[i].v, rows[i].e.ID, q.After) > 0 })
	}
	start += q.Skip
	n := 0
	for i := start; i < len(rows) && (q.Limit <= 0 || n < q.Limit); i++ {
		if err := fn(rows[i].e, storage.StreamMark{Value: rows[i].v, ID: rows[i].e.ID}); err != nil {
			return err
		}
		n++
	}
	return nil
}
