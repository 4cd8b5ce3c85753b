package memory

import (
	"bytes"
	"context"
	"sync"
	"time"

	"svc/storage"
)

// keyTable holds the idempotency keys; Commit takes its lock with the
// partitions' when a transaction stamps a key.
type keyTable struct {
	mu sync.Mutex
	m  map[tenantKey]*storage.KeyRecord
}

type tenantKey struct{ tenant, key string }

// Keys is the store's storage.IdempotencyKeys.
func (s *Entities) Keys() storage.IdempotencyKeys { return &s.keys }

var _ storage.IdempotencyKeys = (*keyTable)(nil)

func copyRecord(r *storage.KeyRecord) *storage.KeyRecord {
	c := *r
	c.Fingerprint = bytes.Clone(r.Fingerprint)
	c.Body = bytes.Clone(r.Body)
	return &c
}

func (t *keyTable) Reserve(_ context.Context, r *storage.KeyRecord, expiredBefore time.Time) (*storage.KeyRecord, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[tenantKey]*storage.KeyRecord{}
	}
	k := tenantKey{r.Tenant, r.Key}
	if cur := t.m[k]; cur != nil && live(cur, r.CreatedAt, expiredBefore) {
		return copyRecord(cur), nil
	}
	n := copyRecord(r)
	n.Done, n.Status, n.Body = false, 0, nil
	t.m[k] = n
	return nil, nil
}

// live is Reserve's rule for a record that stays.
func live(r *storage.KeyRecord, now, expiredBefore time.Time) bool {
	if r.Done {
		return !r.CreatedAt.Before(expiredBefore)
	}
	return r.Status != 0 || !r.LeaseUntil.Before(now)
}

func (t *keyTable) Complete(_ context.Context, tenant, key string, owner [16]byte, fp []byte, status int, body []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.m[tenantKey{tenant, key}]
	if cur == nil || cur.Owner != owner {
		return false, nil
	}
	if len(fp) > 0 {
		cur.Fingerprint = bytes.Clone(fp)
	}
	cur.Done, cur.Status, cur.Body = true, status, bytes.Clone(body)
	return true, nil
}

func (t *keyTable) Release(_ context.Context, tenant, key string, owner [16]byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := tenantKey{tenant, key}
	if cur := t.m[k]; cur != nil && cur.Owner == owner && cur.Status == 0 && !cur.Done {
		delete(t.m, k)
	}
	return nil
}

func (t *keyTable) SweepKeys(_ context.Context, before time.Time) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var n int64
	for k, r := range t.m {
		if r.CreatedAt.Before(before) && (r.Done || r.LeaseUntil.Before(before)) {
			delete(t.m, k)
			n++
		}
	}
	return n, nil
}

// checkStamp reports whether tx's key is still its owner's (t.mu held).
func (t *keyTable) checkStamp(tx *storage.Tx) bool {
	cur := t.m[tenantKey{tx.Tenant, tx.Idempotency.Key}]
	return cur != nil && cur.Owner == tx.Idempotency.Owner && !cur.Done
}

// applyStamp writes tx's answer on its key (t.mu held, checkStamp true).
func (t *keyTable) applyStamp(tx *storage.Tx) {
	st := tx.Idempotency
	cur := t.m[tenantKey{tx.Tenant, st.Key}]
	cur.Status, cur.Body = st.Status, bytes.Clone(st.Body)
	if !st.LeaseUntil.IsZero() {
		cur.LeaseUntil = st.LeaseUntil
	}
}
