package memory

import (
	"context"
	"sort"
	"sync"
	"time"

	"svc/storage"
)

// changeLog is the memory engine's change feed: events appended by Commit
// under the partition locks of their transaction, kept for the life of
// the process (docs/decisions/0032-change-events.md). Cursors are {0, seq}.
type changeLog struct {
	mu  sync.RWMutex
	seq int64
	// evs holds pointers: appending to a long log copies 8 bytes an
	// event when the slice grows, not the whole event.
	evs []*storage.ChangeEvent
}

// Changes returns the change log Commit writes.
func (s *Entities) Changes() storage.ChangeLog { return &s.changes }

// fillChanges sets FromState and BodyBefore of tx.Changes from the
// entities' current revisions, before Commit writes new ones.
func fillChanges(tx *storage.Tx, recs []wrec) {
	for i := range tx.Changes {
		c := &tx.Changes[i]
		if c.Kind == storage.KindCreate {
			continue
		}
		for j := range tx.Writes {
			r := recs[j]
			if tx.Writes[j].ID != c.EntityID || r.r.nrev == 0 {
				continue
			}
			last := r.p.rev(r.r.last)
			c.FromState = r.p.strs[last.state]
			if c.Kind == storage.KindDelete {
				c.ToState = c.FromState // a hard delete ends in the state it had
			}
			if c.WantBefore {
				c.BodyBefore = append([]byte(nil), r.p.data(last)...)
			}
			break
		}
	}
}

// append records tx's changes at commit instant at.
func (l *changeLog) append(tx *storage.Tx, at int64) {
	l.mu.Lock()
	for i := range tx.Changes {
		c := tx.Changes[i]
		// The caller's buffers are reused (fasthttp bodies): keep copies.
		c.BodyAfter = append([]byte(nil), c.BodyAfter...)
		if c.BodyAfter != nil && len(c.BodyAfter) == 0 {
			c.BodyAfter = nil
		}
		l.seq++
		l.evs = append(l.evs, &storage.ChangeEvent{Cursor: storage.ChangeCursor{Lo: l.seq}, Tenant: tx.Tenant, TxID: tx.ID,
			EmittedAt: time.Unix(0, at).UTC(), Change: c})
	}
	l.mu.Unlock()
}

// from is the index of the first event after c.
func (l *changeLog) from(c storage.ChangeCursor) int {
	return sort.Search(len(l.evs), func(i int) bool { return c.Less(l.evs[i].Cursor) })
}

func (l *changeLog) ReadChanges(ctx context.Context, q storage.ChangeQuery) ([]storage.ChangeEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	var out []storage.ChangeEvent
	for i := l.from(q.After); i < len(l.evs) && len(out) < q.Limit; i++ {
		e := l.evs[i]
		if (q.Tenant != "" && e.Tenant != q.Tenant) || (q.Model != nil && e.Model != *q.Model) {
			continue
		}
		out = append(out, *e)
	}
	return out, nil
}

func (l *changeLog) ChangeHead(context.Context) (storage.ChangeCursor, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return storage.ChangeCursor{Lo: l.seq}, nil
}

func (l *changeLog) ChangeCursorAt(_ context.Context, tenant string, model storage.ModelKey, t time.Time) (storage.ChangeCursor, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for i := range l.evs {
		e := l.evs[i]
		if e.Tenant == tenant && e.Model == model && !e.EmittedAt.Before(t) {
			return storage.ChangeCursor{Lo: e.Cursor.Lo - 1}, nil
		}
	}
	return storage.ChangeCursor{Lo: l.seq}, nil
}

func (l *changeLog) ChangeLag(_ context.Context, tenant string, model storage.ModelKey, after storage.ChangeCursor) (int64, time.Time, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	var oldest time.Time
	for i := l.from(after); i < len(l.evs); i++ {
		e := l.evs[i]
		if e.Tenant == tenant && e.Model == model {
			if n == 0 {
				oldest = e.EmittedAt
			}
			n++
		}
	}
	return n, oldest, nil
}

func (l *changeLog) PruneChanges(_ context.Context, before time.Time, keep int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Emission instants grow with the sequence: the old events are a prefix.
	n := sort.Search(len(l.evs), func(i int) bool { return !l.evs[i].EmittedAt.Before(before) })
	evs := l.evs[n:]
	if keep > 0 {
		// Newest first: each key keeps its first keep events met.
		type key struct {
			tenant string
			model  storage.ModelKey
		}
		seen := map[key]int64{}
		drop := make([]bool, len(evs))
		for i := len(evs) - 1; i >= 0; i-- {
			k := key{evs[i].Tenant, evs[i].Model}
			if seen[k]++; seen[k] > keep {
				drop[i] = true
			}
		}
		kept := make([]*storage.ChangeEvent, 0, len(evs))
		for i := range evs {
			if !drop[i] {
				kept = append(kept, evs[i])
			}
		}
		n += len(evs) - len(kept)
		l.evs = kept
		return int64(n), nil
	}
	l.evs = append(l.evs[:0:0], evs...)
	return int64(n), nil
}

// Subscriptions is the memory engine's subscription store.
type Subscriptions struct {
	mu sync.RWMutex
	m  map[string]map[string]storage.Subscription
}

// NewSubscriptions returns an empty store.
func NewSubscriptions() *Subscriptions {
	return &Subscriptions{m: map[string]map[string]storage.Subscription{}}
}

func (s *Subscriptions) CreateSubscription(_ context.Context, sub *storage.Subscription) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.m[sub.Tenant]
	if t == nil {
		t = map[string]storage.Subscription{}
		s.m[sub.Tenant] = t
	}
	if _, ok := t[sub.ID]; ok {
		return storage.ErrExists
	}
	c := *sub
	c.Spec = append([]byte(nil), sub.Spec...)
	t[sub.ID] = c
	return nil
}

func (s *Subscriptions) GetSubscription(_ context.Context, tenant, id string) (*storage.Subscription, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sub, ok := s.m[tenant][id]
	if !ok {
		return nil, storage.ErrNotFound
	}
	return &sub, nil
}

func (s *Subscriptions) ListSubscriptions(_ context.Context, tenant, afterID string, limit int) ([]storage.Subscription, error) {
	s.mu.RLock()
	var out []storage.Subscription
	for id, sub := range s.m[tenant] {
		if id > afterID {
			out = append(out, sub)
		}
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *Subscriptions) AllSubscriptions(context.Context) ([]storage.Subscription, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []storage.Subscription
	for _, t := range s.m {
		for _, sub := range t {
			out = append(out, sub)
		}
	}
	return out, nil
}

func (s *Subscriptions) UpdateSubscription(_ context.Context, sub *storage.Subscription) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.m[sub.Tenant][sub.ID]
	if !ok {
		return storage.ErrNotFound
	}
	cur.IncludeBody, cur.Spec = sub.IncludeBody, append([]byte(nil), sub.Spec...)
	s.m[sub.Tenant][sub.ID] = cur
	return nil
}

func (s *Subscriptions) DeleteSubscription(_ context.Context, tenant, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[tenant][id]; !ok {
		return storage.ErrNotFound
	}
	delete(s.m[tenant], id)
	return nil
}

func (s *Subscriptions) AckSubscription(_ context.Context, tenant, id string, c storage.ChangeCursor, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.m[tenant][id]
	if !ok {
		return storage.ErrNotFound
	}
	if cur.Cursor.Less(c) {
		cur.Cursor = c
	}
	cur.AttachedAt = at
	s.m[tenant][id] = cur
	return nil
}
