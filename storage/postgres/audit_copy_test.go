package postgres

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/storage"
)

// TestAuditCopyMatchesInsert: a large transaction's events written with
// COPY are the rows the unnest insert writes for the same events (own or
// inherited transaction id, own or commit time, data or none, quoting).
func TestAuditCopyMatchesInsert(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	other := uuid.Must(uuid.NewRandom())
	events := make([]storage.AuditEvent, copyThreshold+3)
	for i := range events {
		e := &events[i]
		e.EntityID = uuid.Must(uuid.NewRandom())
		e.Kind, e.Type, e.State = "EntityChange", "CREATE", fmt.Sprintf(`st"%d\`, i)
		e.Details = fmt.Sprintf("details, {%d}", i)
		if i%2 == 0 {
			e.Data = []byte(fmt.Sprintf(`{"n":%d,"s":"a\"b"}`, i))
		}
		if i%3 == 0 {
			e.TxID = other
		}
		if i%4 == 0 {
			e.Time = time.Unix(0, int64(1_000_000+i))
		}
	}
	now := time.Now().UnixNano()
	write := func(tenant string, viaCopy bool) {
		tx := &storage.Tx{Tenant: tenant, ID: uuid.Must(uuid.NewRandom()), User: "u'1", AuditSeq: 5, Audit: events}
		ptx, err := db.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer ptx.Rollback(ctx)
		if viaCopy {
			err = copyAudit(ctx, ptx, tx, now)
		} else {
			_, err = ptx.Exec(ctx, insertAudit, append([]any{tx.Tenant, tx.ID, tx.User}, auditArgs(tx, now)...)...)
		}
		if err != nil {
			t.Fatal(err)
		}
		// Rows name their transaction; make both tenants' comparable.
		if _, err := ptx.Exec(ctx, `UPDATE audit_events SET tx_id = '00000000-0000-0000-0000-000000000001' WHERE tenant = $1 AND tx_id = $2`, tenant, tx.ID); err != nil {
			t.Fatal(err)
		}
		if err := ptx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write("via-insert", false)
	write("via-copy", true)
	rows := func(tenant string) [][]any {
		r, err := db.pool.Query(ctx, `SELECT entity_id, tx_id, seq, at_ns, kind, event_type, state, user_id, details, data FROM audit_events WHERE tenant = $1 ORDER BY seq`, tenant)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out [][]any
		for r.Next() {
			v, err := r.Values()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	a, b := rows("via-insert"), rows("via-copy")
	if len(a) != len(events) || !reflect.DeepEqual(a, b) {
		t.Fatalf("insert rows:\n%v\ncopy rows:\n%v", a, b)
	}
}
