package storagetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"svc/storage"
)

// IdempotencyKeys checks a storage.IdempotencyKeys implementation and its
// engine's Commit of Tx.Idempotency. newStore returns the engine's
// entities and keys over one empty database.
func IdempotencyKeys(t *testing.T, newStore func(t *testing.T) (storage.Entities, storage.IdempotencyKeys)) {
	ctx := context.Background()
	m := storage.ModelKey{Name: "order", Version: 1}
	t0 := time.Unix(1_800_000_000, 0).UTC()
	lease := time.Minute
	rec := func(tenant, key string, owner [16]byte, at time.Time) *storage.KeyRecord {
		return &storage.KeyRecord{Tenant: tenant, Key: key, Fingerprint: []byte("fp-" + key), Owner: owner, LeaseUntil: at.Add(lease), CreatedAt: at}
	}

	t.Run("reserve, stamp in the commit, complete, replay", func(t *testing.T) {
		ents, keys := newStore(t)
		a, b := newID(t), newID(t)
		if got, err := keys.Reserve(ctx, rec("t1", "k1", a, t0), t0.Add(-time.Hour)); err != nil || got != nil {
			t.Fatalf("first reserve: %v %v", got, err)
		}
		got, err := keys.Reserve(ctx, rec("t1", "k1", b, t0.Add(time.Second)), t0.Add(-time.Hour))
		if err != nil || got == nil || got.Owner != a || got.Done || got.Status != 0 || !bytes.Equal(got.Fingerprint, []byte("fp-k1")) {
			t.Fatalf("second reserve while in flight: %+v %v", got, err)
		}
		// Another tenant's key of the same name is its own.
		if got, err := keys.Reserve(ctx, rec("t2", "k1", b, t0), t0.Add(-time.Hour)); err != nil || got != nil {
			t.Fatalf("other tenant: %v %v", got, err)
		}
		// A stamp by an attempt that does not hold the key fails the write.
		tx := &storage.Tx{Tenant: "t1", ID: newID(t), User: "u1",
			Writes:      []storage.Write{{ID: newID(t), Model: m, State: "CREATED", Data: []byte(`{"a":1}`), Transition: "loopback"}},
			Idempotency: &storage.KeyStamp{Key: "k1", Owner: b, Status: 200, Body: []byte(`"b"`)}}
		if _, err := ents.Commit(ctx, tx); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("stamp of a non-owner: %v, want ErrConflict", err)
		}
		if _, err := ents.Get(ctx, "t1", tx.Writes[0].ID); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("refused keyed write is visible: %v", err)
		}
		tx.ID, tx.Writes[0].ID = newID(t), newID(t)
		tx.Idempotency = &storage.KeyStamp{Key: "k1", Owner: a, Status: 200, Body: []byte(`"a"`), LeaseUntil: t0.Add(2 * lease)}
		if _, err := ents.Commit(ctx, tx); err != nil {
			t.Fatalf("stamp of the owner: %v", err)
		}
		got, err = keys.Reserve(ctx, rec("t1", "k1", b, t0.Add(time.Hour)), t0.Add(-time.Hour))
		if err != nil || got == nil || got.Status != 200 || string(got.Body) != `"a"` || got.Done {
			t.Fatalf("after the stamped commit (lease over, something committed): %+v %v", got, err)
		}
		if ok, err := keys.Complete(ctx, "t1", "k1", b, nil, 500, nil); err != nil || ok {
			t.Fatalf("complete by a non-owner: %v %v", ok, err)
		}
		if ok, err := keys.Complete(ctx, "t1", "k1", a, []byte("fp-final"), 201, []byte(`"final"`)); err != nil || !ok {
			t.Fatalf("complete: %v %v", ok, err)
		}
		got, err = keys.Reserve(ctx, rec("t1", "k1", b, t0.Add(time.Hour)), t0.Add(-time.Hour))
		if err != nil || got == nil || !got.Done || got.Status != 201 || string(got.Body) != `"final"` || string(got.Fingerprint) != "fp-final" {
			t.Fatalf("completed record: %+v %v", got, err)
		}
		// A stamp after completion fails: the key is no longer in flight.
		tx.ID, tx.Writes[0].ID = newID(t), newID(t)
		if _, err := ents.Commit(ctx, tx); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("stamp after complete: %v, want ErrConflict", err)
		}
		// Past the retention the key is new again.
		if got, err := keys.Reserve(ctx, rec("t1", "k1", b, t0.Add(48*time.Hour)), t0.Add(time.Second)); err != nil || got != nil {
			t.Fatalf("reserve past the retention: %+v %v", got, err)
		}
	})

	t.Run("release and lease takeover", func(t *testing.T) {
		_, keys := newStore(t)
		a, b := newID(t), newID(t)
		if got, err := keys.Reserve(ctx, rec("t1", "k", a, t0), t0.Add(-time.Hour)); err != nil || got != nil {
			t.Fatal(got, err)
		}
		if err := keys.Release(ctx, "t1", "k", b); err != nil {
			t.Fatal(err)
		}
		if got, _ := keys.Reserve(ctx, rec("t1", "k", b, t0), t0.Add(-time.Hour)); got == nil || got.Owner != a {
			t.Fatalf("release by a non-owner removed the key: %+v", got)
		}
		if err := keys.Release(ctx, "t1", "k", a); err != nil {
			t.Fatal(err)
		}
		if got, err := keys.Reserve(ctx, rec("t1", "k", b, t0), t0.Add(-time.Hour)); err != nil || got != nil {
			t.Fatalf("after release: %+v %v", got, err)
		}
		// b's lease ends at t0+lease: an attempt after it takes the key.
		if got, err := keys.Reserve(ctx, rec("t1", "k", a, t0.Add(2*lease)), t0.Add(-time.Hour)); err != nil || got != nil {
			t.Fatalf("takeover after the lease: %+v %v", got, err)
		}
		if ok, _ := keys.Complete(ctx, "t1", "k", b, nil, 200, nil); ok {
			t.Fatal("the attempt whose lease was taken over completed")
		}
	})

	t.Run("sweep", func(t *testing.T) {
		_, keys := newStore(t)
		a := newID(t)
		for i, k := range []string{"old-done", "old-flight", "new-done"} {
			at := t0
			if i == 2 {
				at = t0.Add(time.Hour)
			}
			if _, err := keys.Reserve(ctx, rec("t1", k, a, at), t0.Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			if k != "old-flight" {
				if _, err := keys.Complete(ctx, "t1", k, a, nil, 200, []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
		}
		n, err := keys.SweepKeys(ctx, t0.Add(30*time.Minute))
		// Engines may share one database across these subtests: at least
		// the two old keys of this one go.
		if err != nil || n < 2 {
			t.Fatalf("swept %d, %v; want 2", n, err)
		}
		if got, _ := keys.Reserve(ctx, rec("t1", "old-done", a, t0.Add(time.Hour)), t0); got != nil {
			t.Fatalf("the old key was not swept: %+v", got)
		}
		if got, _ := keys.Reserve(ctx, rec("t1", "new-done", a, t0.Add(time.Hour)), t0); got == nil || !got.Done {
			t.Fatalf("the newer key was swept: %+v", got)
		}
	})
}
