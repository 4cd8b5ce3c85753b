package model

import (
	"context"
	"testing"
	"time"

	"svc/storage"
	"svc/storage/memory"
)

// TestCacheLease: a decoded schema serves until its lease (±10 %) ends,
// then the stored record is decoded again; without a lease it serves until
// the revision changes.
func TestCacheLease(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	ctx := context.Background()
	store := memory.NewModels()
	m := &storage.Model{Tenant: "t1", Key: storage.ModelKey{Name: "m", Version: 1}, Schema: nil}
	if err := store.PutModel(ctx, m); err != nil {
		t.Fatal(err)
	}
	rec, err := store.GetModel(ctx, "t1", m.Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lease        time.Duration
		after        time.Duration
		wantSameCopy bool
	}{
		{time.Minute, 50 * time.Second, true},  // inside even the shortest jittered lease (54 s)
		{time.Minute, 70 * time.Second, false}, // past even the longest (66 s)
		{0, 1000 * time.Hour, true},            // no lease: revision only
	} {
		s := New(store, nil, WithCacheLease(c.lease), withClock(clock))
		first, err := s.decoded(rec)
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(c.after)
		second, err := s.decoded(rec)
		if err != nil {
			t.Fatal(err)
		}
		if (first == second) != c.wantSameCopy {
			t.Errorf("lease %s after %s: same copy %t", c.lease, c.after, first == second)
		}
	}
}
