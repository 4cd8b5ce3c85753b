package streamdata

import (
	"bytes"
	"context"
	"sort"
	"sync"

	"svc/storage"
)

// scanPager serves stream pages on an engine without a StreamPager (the
// memory engine): the same search plan as a scan of the snapshot at the
// point in time, sorted by range value then id, then paged by keyset.
type scanPager struct {
	s     storage.Searcher
	cache *snapCache
}

// NewScanPager is the pager of an engine without its own (the memory
// engine): what New uses when Deps.Pager is nil.
func NewScanPager(s storage.Searcher) storage.StreamPager {
	return scanPager{s: s, cache: &snapCache{m: map[string]*snapshot{}, max: maxSnapshots}}
}

// fetchBatch is how many entities a page fetches from the snapshot at a
// time: rows are rendered batch by batch, never a whole page of entities
// held at once.
const fetchBatch = 128

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

// snapshot is the ordered stream of one (definition, point in time): what
// a scan found, sorted once; later pages binary-search it.
type snapshot struct {
	ids  [][16]byte
	vals []storage.SortValue
}

// snapCache keeps the latest snapshots (the as-of result of a point in
// time never changes, so a cached order is exact).
type snapCache struct {
	mu    sync.Mutex
	m     map[string]*snapshot
	order []string
	max   int
}

func (c *snapCache) get(k string) *snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *snapCache) put(k string, s *snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		return
	}
	if len(c.order) >= c.max {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[k] = s
	c.order = append(c.order, k)
}

func (p scanPager) snapshot(ctx context.Context, q *storage.StreamQuery) (*snapshot, error) {
	if q.Stream != "" {
		if s := p.cache.get(q.Stream); s != nil {
			return s, nil
		}
	}
	sq := q.Search
	sq.Sort, sq.Max = nil, 0
	es, err := p.s.Search(ctx, &sq)
	if err != nil {
		return nil, err
	}
	type row struct {
		id [16]byte
		v  storage.SortValue
	}
	rows := make([]row, 0, len(es))
	for _, e := range es {
		v := rangeValue(e, &q.Range)
		if v.Missing {
			continue
		}
		rows = append(rows, row{e.ID, v})
	}
	k := &q.Range
	sort.Slice(rows, func(i, j int) bool {
		mk := storage.StreamMark{Value: rows[j].v, ID: rows[j].id}
		return cmpMark(k, rows[i].v, rows[i].id, &mk) < 0
	})
	s := &snapshot{ids: make([][16]byte, len(rows)), vals: make([]storage.SortValue, len(rows))}
	for i, r := range rows {
		s.ids[i], s.vals[i] = r.id, r.v
	}
	if q.Stream != "" {
		p.cache.put(q.Stream, s)
	}
	return s, nil
}

func (p scanPager) StreamPage(ctx context.Context, q *storage.StreamQuery, fn func(e *storage.Entity, m storage.StreamMark) error) error {
	s, err := p.snapshot(ctx, q)
	if err != nil {
		return err
	}
	k := &q.Range
	start := 0
	if q.After != nil {
		start = sort.Search(len(s.ids), func(i int) bool { return cmpMark(k, s.vals[i], s.ids[i], q.After) > 0 })
	}
	start += q.Skip
	if start >= len(s.ids) {
		return nil
	}
	end := len(s.ids)
	if q.Limit > 0 && start+q.Limit < end {
		end = start + q.Limit
	}
	for from := start; from < end; from += fetchBatch {
		to := min(from+fetchBatch, end)
		es, err := p.s.Fetch(ctx, q.Search.Tenant, s.ids[from:to], q.Search.At)
		if err != nil {
			return err
		}
		for i, e := range es {
			// Fetch skips nothing here: every id was live at the instant.
			if err := fn(e, storage.StreamMark{Value: s.vals[from+i], ID: e.ID}); err != nil {
				return err
			}
		}
	}
	return nil
}
