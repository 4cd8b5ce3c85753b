package entity

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/storage"
	"svc/txtoken"
)

func joinCode(err error) string {
	if e, ok := apierr.As(err); ok {
		return e.Code.String()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// TestJoinTxStates: a token joins only its own tenant's open
// transaction; committed, rolled back, unknown and expired transactions
// answer with the codes of docs/decisions/0015-transactions.md.
func TestJoinTxStates(t *testing.T) {
	sg := txtoken.New([]byte("0123456789abcdef0123456789abcdef"), "n1", time.Minute)
	s := &Service{joins: newJoins(sg)}
	open := s.joins.newOpenTx("A", uuid.New())
	tok := open.Token()
	if o, err := s.JoinTx("A", tok); err != nil || o != open {
		t.Fatalf("join: %v", err)
	}
	if c := joinCode(func() error { _, err := s.JoinTx("B", tok); return err }()); c != "FORBIDDEN" {
		t.Fatalf("other tenant: %s", c)
	}
	if c := joinCode(func() error { _, err := s.JoinTx("A", tok+"x"); return err }()); c != "UNAUTHORIZED" {
		t.Fatalf("bad token: %s", c)
	}
	if c := joinCode(func() error { _, err := s.JoinTx("A", sg.Sign(uuid.NewString())); return err }()); c != "TRANSACTION_NOT_FOUND" {
		t.Fatalf("unknown: %s", c)
	}
	foreign := txtoken.New([]byte("0123456789abcdef0123456789abcdef"), "n2", time.Minute)
	if c := joinCode(func() error { _, err := s.JoinTx("A", foreign.Sign(uuid.UUID(open.id).String())); return err }()); c != "TRANSACTION_NOT_FOUND" {
		t.Fatalf("another node's token: %s", c)
	}
	past := sg.WithClock(func() time.Time { return time.Now().Add(-2 * time.Minute) })
	if c := joinCode(func() error { _, err := s.JoinTx("A", past.Sign(uuid.UUID(open.id).String())); return err }()); c != "TRANSACTION_EXPIRED" {
		t.Fatalf("expired: %s", c)
	}
	open.seal(&storage.Tx{Tenant: "A", ID: open.id})
	if c := joinCode(func() error { _, err := s.JoinTx("A", tok); return err }()); c != "TRANSACTION_NOT_FOUND" {
		t.Fatalf("committed: %s", c)
	}
	if c := joinCode(open.add(&storage.Tx{})); c != "TRANSACTION_NOT_FOUND" {
		t.Fatalf("write after commit: %s", c)
	}
	rb := s.joins.newOpenTx("A", uuid.New())
	rtok := rb.Token()
	(&owner{cur: rb}).done()
	if c := joinCode(func() error { _, err := s.JoinTx("A", rtok); return err }()); c != "TRANSACTION_NOT_FOUND" {
		t.Fatalf("rolled back: %s", c)
	}
	if len(s.joins.open) != 0 {
		t.Fatalf("registry keeps %d finished transactions", len(s.joins.open))
	}
}

// TestJoinedWritesRaceSeal: callbacks buffering writes while the owner
// seals: every write either lands in the sealed transaction or is refused
// with TRANSACTION_NOT_FOUND, never lost (run with -race).
func TestJoinedWritesRaceSeal(t *testing.T) {
	s := &Service{joins: newJoins(txtoken.New([]byte("k"), "n", time.Minute))}
	for round := 0; round < 50; round++ {
		o := s.joins.newOpenTx("A", uuid.New())
		o.Token()
		const n = 8
		var wg sync.WaitGroup
		accepted := make([][16]byte, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := uuid.New()
				if o.add(&storage.Tx{Tenant: "A", Writes: []storage.Write{{ID: id, Data: []byte(`{}`)}}}) == nil {
					accepted[i] = id
				}
				o.PendingEntity(id, nil)
			}()
		}
		tx := &storage.Tx{Tenant: "A", ID: o.id}
		o.seal(tx)
		wg.Wait()
		in := map[[16]byte]bool{}
		for _, w := range tx.Writes {
			in[w.ID] = true
		}
		for _, id := range accepted {
			if id != ([16]byte{}) && !in[id] {
				t.Fatalf("round %d: accepted write %x lost", round, id)
			}
		}
	}
}

// TestMergedSaves: several joined saves of one entity make one write with
// the last content and the first expected version; the owner's write of
// the same entity wins; a create deleted again writes nothing.
func TestMergedSaves(t *testing.T) {
	s := &Service{joins: newJoins(txtoken.New([]byte("k"), "n", time.Minute))}
	o := s.joins.newOpenTx("A", uuid.New())
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(o.add(&storage.Tx{Writes: []storage.Write{{ID: a, Data: []byte(`1`), ExpectVersion: 3}, {ID: b, Data: []byte(`x`)}}}))
	must(o.add(&storage.Tx{Writes: []storage.Write{{ID: a, Data: []byte(`2`), ExpectVersion: 3}, {ID: b, Delete: true}, {ID: c, Data: []byte(`j`), ExpectVersion: 1}}}))
	if e, found := o.PendingEntity(a, nil); !found || string(e.Data) != "2" || e.TxID != o.id {
		t.Fatalf("lookup a: %+v %v", e, found)
	}
	if e, found := o.PendingEntity(b, nil); !found || !e.Deleted {
		t.Fatalf("lookup deleted b: %+v %v", e, found)
	}
	tx := &storage.Tx{ID: o.id, Writes: []storage.Write{{ID: c, Data: []byte(`owner`), ExpectVersion: 1}}}
	o.seal(tx)
	got := map[[16]byte]storage.Write{}
	for _, w := range tx.Writes {
		if _, dup := got[w.ID]; dup {
			t.Fatalf("two writes of %x", w.ID)
		}
		got[w.ID] = w
	}
	if len(got) != 2 || string(got[a].Data) != "2" || got[a].ExpectVersion != 3 || string(got[c].Data) != "owner" {
		t.Fatalf("merged %+v", tx.Writes)
	}
}
