// Package overlay lets a request that joined an open transaction read its
// own writes (docs/ARCHITECTURE.md, storage). The transaction's writes are
// not committed yet, so no engine has them; the wrappers below put them
// over what the engine answers: every current read (get, list, scan,
// counts, history, search, fetch) of a joined request sees the buffered
// writes as if they were committed, with deleted entities gone. Reads at a
// point in time see committed data only. The transaction itself is a
// storage.Pending found in the request's context (storage.PendingFrom).
package overlay

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"time"

	"github.com/google/uuid"

	"svc/predicate"
	"svc/storage"
)

// Entities returns s reading through the buffered writes of the
// transaction a request joined; writes pass through unchanged.
func Entities(s storage.Entities) storage.Entities {
	if o, ok := s.(entities); ok {
		return o
	}
	return entities{s}
}

type entities struct{ storage.Entities }

// pendingOf is the pending entities of model, indexed by id; nil when the
// request joined nothing or the transaction holds none of the model.
func pendingOf(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time) ([]*storage.Entity, map[[16]byte]*storage.Entity) {
	if at != nil {
		return nil, nil
	}
	p := storage.PendingFrom(ctx, tenant)
	if p == nil {
		return nil, nil
	}
	es := p.PendingEntities(model)
	if len(es) == 0 {
		return nil, nil
	}
	by := make(map[[16]byte]*storage.Entity, len(es))
	for _, e := range es {
		by[e.ID] = e
	}
	return es, by
}

func (o entities) Get(ctx context.Context, tenant string, id [16]byte) (*storage.Entity, error) {
	e, err := o.Entities.Get(ctx, tenant, id)
	p := storage.PendingFrom(ctx, tenant)
	if p == nil || (err != nil && !errors.Is(err, storage.ErrNotFound)) {
		return e, err
	}
	b, found := p.PendingEntity(id, e)
	if !found {
		return e, err
	}
	if b.Deleted {
		return nil, storage.ErrNotFound
	}
	return b, nil
}

func (o entities) History(ctx context.Context, tenant string, id [16]byte) ([]storage.Entity, error) {
	h, err := o.Entities.History(ctx, tenant, id)
	p := storage.PendingFrom(ctx, tenant)
	if p == nil || (err != nil && !errors.Is(err, storage.ErrNotFound)) {
		return h, err
	}
	var base *storage.Entity
	if len(h) > 0 && !h[len(h)-1].Deleted {
		base = &h[len(h)-1]
	}
	b, found := p.PendingEntity(id, base)
	if !found {
		return h, err
	}
	r := *b
	r.Data = nil
	r.Version = int64(len(h)) + 1
	switch {
	case b.Deleted && base == nil:
		// Created and deleted again in the transaction: nothing to show.
		return h, err
	case b.Deleted:
		r.ChangeType = storage.ChangeDeleted
	case base == nil:
		r.ChangeType = storage.ChangeCreated
	default:
		r.ChangeType = storage.ChangeUpdated
	}
	return append(h, r), nil
}

func (o entities) List(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, offset, limit int) ([]*storage.Entity, error) {
	pend, by := pendingOf(ctx, tenant, model, at)
	if pend == nil || limit <= 0 {
		return o.Entities.List(ctx, tenant, model, at, offset, limit)
	}
	// Every buffered entity may hide a committed one before the page.
	base, err := o.Entities.List(ctx, tenant, model, nil, 0, offset+limit+len(pend))
	if err != nil {
		return nil, err
	}
	out := merge(base, pend, by, nil)
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].ID[:], out[j].ID[:]) < 0 })
	if offset >= len(out) {
		return []*storage.Entity{}, nil
	}
	return out[offset:min(len(out), offset+limit)], nil
}

// merge drops the committed entities the transaction rewrote from base
// and adds its live ones that keep (all when keep is nil).
func merge(base, pend []*storage.Entity, by map[[16]byte]*storage.Entity, keep func(*storage.Entity) bool) []*storage.Entity {
	out := make([]*storage.Entity, 0, len(base)+len(pend))
	created := map[[16]byte]time.Time{}
	for _, e := range base {
		if _, ok := by[e.ID]; ok {
			created[e.ID] = e.CreatedAt
			continue
		}
		out = append(out, e)
	}
	for _, e := range pend {
		if e.Deleted {
			continue
		}
		if c, ok := created[e.ID]; ok && !c.IsZero() {
			cp := *e
			cp.CreatedAt = c
			e = &cp
		}
		if keep == nil || keep(e) {
			out = append(out, e)
		}
	}
	return out
}

func (o entities) Scan(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time, fn func(*storage.Entity) error) error {
	pend, by := pendingOf(ctx, tenant, model, at)
	if pend == nil {
		return o.Entities.Scan(ctx, tenant, model, at, fn)
	}
	err := o.Entities.Scan(ctx, tenant, model, at, func(e *storage.Entity) error {
		if _, ok := by[e.ID]; ok {
			return nil
		}
		return fn(e)
	})
	if err != nil {
		return err
	}
	for _, e := range pend {
		if !e.Deleted {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// committedState is the committed live state of each pending entity
// ("" and false when it has none).
func (o entities) committedState(ctx context.Context, tenant string, id [16]byte) (string, bool, error) {
	e, err := o.Entities.Get(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return e.State, true, nil
}

func (o entities) Count(ctx context.Context, tenant string, model storage.ModelKey) (int64, error) {
	n, err := o.Entities.Count(ctx, tenant, model)
	pend, _ := pendingOf(ctx, tenant, model, nil)
	if err != nil || pend == nil {
		return n, err
	}
	for _, e := range pend {
		_, live, err := o.committedState(ctx, tenant, e.ID)
		if err != nil {
			return 0, err
		}
		if live {
			n--
		}
		if !e.Deleted {
			n++
		}
	}
	return n, nil
}

func (o entities) CountByState(ctx context.Context, tenant string, model storage.ModelKey, at *time.Time) ([]storage.StateCount, error) {
	cs, err := o.Entities.CountByState(ctx, tenant, model, at)
	pend, _ := pendingOf(ctx, tenant, model, at)
	if err != nil || pend == nil {
		return cs, err
	}
	by := map[string]int64{}
	for _, c := range cs {
		by[c.State] += c.Count
	}
	for _, e := range pend {
		st, live, err := o.committedState(ctx, tenant, e.ID)
		if err != nil {
			return nil, err
		}
		if live {
			by[st]--
		}
		if !e.Deleted {
			by[e.State]++
		}
	}
	out := make([]storage.StateCount, 0, len(by))
	for st, n := range by {
		if n > 0 {
			out = append(out, storage.StateCount{Model: model, State: st, Count: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].State < out[j].State })
	return out, nil
}

// Searcher returns s searching through the buffered writes of the
// transaction a request joined.
func Searcher(s storage.Searcher) storage.Searcher {
	if o, ok := s.(searcher); ok {
		return o
	}
	return searcher{s}
}

type searcher struct{ storage.Searcher }

// MetaOf is the lifecycle view of e that conditions read.
func MetaOf(e *storage.Entity, m *predicate.Meta) {
	*m = predicate.Meta{ID: uuid.UUID(e.ID).String(), State: e.State, TransitionForLatestSave: e.Transition,
		TransactionID: uuid.UUID(e.TxID).String(), CreationDate: e.CreatedAt, LastUpdateTime: e.UpdatedAt}
}

func (o searcher) Search(ctx context.Context, q *storage.SearchQuery) ([]*storage.Entity, error) {
	pend, by := pendingOf(ctx, q.Tenant, q.Model, q.At)
	if pend == nil {
		return o.Searcher.Search(ctx, q)
	}
	// Each buffered entity may hide one committed match: ask for that
	// many more, so "more than Max" still shows after the merge.
	bq := *q
	if bq.Max > 0 {
		bq.Max += len(pend)
	}
	base, err := o.Searcher.Search(ctx, &bq)
	if err != nil {
		return nil, err
	}
	var m predicate.Meta
	out := merge(base, pend, by, func(e *storage.Entity) bool {
		if q.Cond == nil {
			return true
		}
		MetaOf(e, &m)
		return q.Cond.Match(e.Data, &m)
	})
	storage.SortEntities(out, q.Sort)
	if q.Max > 0 && len(out) > q.Max+1 {
		out = out[:q.Max+1]
	}
	return out, nil
}

func (o searcher) SearchIDs(ctx context.Context, q *storage.SearchQuery) ([][16]byte, error) {
	if pend, _ := pendingOf(ctx, q.Tenant, q.Model, q.At); pend == nil {
		return o.Searcher.SearchIDs(ctx, q)
	}
	es, err := o.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	ids := make([][16]byte, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	return ids, nil
}

func (o searcher) Fetch(ctx context.Context, tenant string, ids [][16]byte, at *time.Time) ([]*storage.Entity, error) {
	p := storage.PendingFrom(ctx, tenant)
	if p == nil || at != nil {
		return o.Searcher.Fetch(ctx, tenant, ids, at)
	}
	base, err := o.Searcher.Fetch(ctx, tenant, ids, nil)
	if err != nil {
		return nil, err
	}
	committed := make(map[[16]byte]*storage.Entity, len(base))
	for _, e := range base {
		committed[e.ID] = e
	}
	out := make([]*storage.Entity, 0, len(ids))
	for _, id := range ids {
		c := committed[id]
		if b, found := p.PendingEntity(id, c); found {
			if !b.Deleted {
				out = append(out, b)
			}
			continue
		}
		if c != nil {
			out = append(out, c)
		}
	}
	return out, nil
}
