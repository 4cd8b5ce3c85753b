package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"svc/storage"
)

// Audit events are rows of audit_events written by the commit of the
// change they record. Most writes run no workflow and record the same
// three events (STATE_MACHINE_START, STATE_MACHINE_FINISH, the
// EntityChange): such a trail is one row of kind '~trio', read back as the
// three events, and the trail of a plain create is no row at all — the
// create's first revision keeps its sequence (revisions.trio) and the rest
// is that revision's. A create then writes two rows (entity, revision)
// instead of five. The memory engine keeps trails the same way
// (storage/memory/audit.go).

const (
	trioStart        = "STATE_MACHINE_START"
	trioFinishDetail = "State machine finished"
	createStart      = "State machine started"
	kindTrio         = "~trio"
)

var trioFinishData = []byte(`{"success":true}`)

// trioOf says whether evs (one entity's run of tx's events) are exactly the
// trail of a write without a workflow engine: START (any details, no data),
// FINISH with the fixed details and data, then the EntityChange, one state,
// stamped with the commit instant and of tx itself.
func trioOf(tx *storage.Tx, evs []storage.AuditEvent) bool {
	if len(evs) != 3 {
		return false
	}
	a, f, c := &evs[0], &evs[1], &evs[2]
	for _, e := range evs {
		if !e.Time.IsZero() || (e.TxID != ([16]byte{}) && e.TxID != tx.ID) {
			return false
		}
	}
	return a.Kind == storage.AuditStateMachine && a.Type == trioStart && a.Data == nil &&
		f.Kind == storage.AuditStateMachine && f.Type == storage.AuditEventFinish && f.State == a.State &&
		f.Details == trioFinishDetail && string(f.Data) == string(trioFinishData) &&
		c.Kind == storage.AuditEntityChange && c.State == a.State && c.Details == "" && c.Data == nil
}

// auditPlan says how tx's events are stored: trio[i] is the revisions.trio
// value of write i (its create's implicit trail), skip marks the events
// that trail covers, compact marks the first event of a stored trio.
type auditPlan struct {
	trio    []int
	skip    []bool
	compact []bool
}

func planAudit(tx *storage.Tx) auditPlan {
	p := auditPlan{trio: make([]int, len(tx.Writes))}
	if len(tx.Audit) == 0 {
		return p
	}
	p.skip, p.compact = make([]bool, len(tx.Audit)), make([]bool, len(tx.Audit))
	created := map[[16]byte]int{}
	for i := range tx.Writes {
		if w := &tx.Writes[i]; w.ExpectVersion == 0 && !w.Delete {
			created[w.ID] = i
		}
	}
	seen := map[[16]byte]bool{}
	for i := 0; i < len(tx.Audit); {
		id := tx.Audit[i].EntityID
		k := i + 1
		for k < len(tx.Audit) && tx.Audit[k].EntityID == id {
			k++
		}
		run := tx.Audit[i:k]
		if trioOf(tx, run) {
			wi, isCreate := created[id]
			if isCreate && !seen[id] && run[0].Details == createStart && run[2].Type == storage.AuditCreate &&
				run[0].State == tx.Writes[wi].State {
				p.trio[wi] = tx.AuditSeq + i + 1
				p.skip[i], p.skip[i+1], p.skip[i+2] = true, true, true
			} else {
				p.compact[i] = true
				p.skip[i+1], p.skip[i+2] = true, true
			}
		}
		seen[id] = true
		i = k
	}
	return p
}

const insertAudit = `INSERT INTO audit_events (entity_id, tenant, at_ns, seq, tx_id, kind, event_type, state, user_id, details, data)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func writeAudit(w *wtx, tx *storage.Tx, p *auditPlan, at int64) error {
	for i := range tx.Audit {
		if p.skip[i] {
			continue
		}
		e := &tx.Audit[i]
		txID := tx.ID
		if e.TxID != ([16]byte{}) {
			txID = e.TxID
		}
		t := at
		if !e.Time.IsZero() {
			t = e.Time.UnixNano()
		}
		kind, typ, data := e.Kind, e.Type, any(nil)
		if p.compact[i] {
			kind, typ = kindTrio, tx.Audit[i+2].Type
		} else if e.Data != nil {
			data = e.Data
		}
		if _, err := w.exec(insertAudit, e.EntityID[:], tx.Tenant, t, tx.AuditSeq+i, txID[:], kind, typ, e.State, tx.User, e.Details, data); err != nil {
			return fmt.Errorf("sqlite: inserting audit events: %w", err)
		}
	}
	return nil
}

// Audits reads the audit trail.
type Audits struct{ db *DB }

// Audits returns the audit trail store.
func (db *DB) Audits() *Audits { return &Audits{db} }

// expandTrio appends the three events a trio stands for, newest first.
func expandTrio(out []storage.AuditEvent, base storage.AuditEvent, change, startDetails string) []storage.AuditEvent {
	c := base
	c.Seq, c.Kind, c.Type = base.Seq+2, storage.AuditEntityChange, change
	f := base
	f.Seq, f.Kind, f.Type, f.Details, f.Data = base.Seq+1, storage.AuditStateMachine, storage.AuditEventFinish, trioFinishDetail, trioFinishData
	s := base
	s.Kind, s.Type, s.Details = storage.AuditStateMachine, trioStart, startDetails
	return append(out, c, f, s)
}

// events reads every event of an entity, newest first (time, then seq).
func (a *Audits) events(ctx context.Context, tenant string, id [16]byte) ([]storage.AuditEvent, error) {
	rows, err := a.db.query(ctx, `SELECT at_ns, seq, tx_id, kind, event_type, state, user_id, details, data FROM audit_events
		WHERE entity_id = ? AND tenant = ? ORDER BY at_ns DESC, seq DESC`, id[:], tenant)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storage.AuditEvent
	for rows.Next() {
		e := storage.AuditEvent{EntityID: id}
		var at int64
		var txID []byte
		if err := rows.Scan(&at, &e.Seq, &txID, &e.Kind, &e.Type, &e.State, &e.User, &e.Details, &e.Data); err != nil {
			return nil, fmt.Errorf("sqlite: reading audit events: %w", err)
		}
		e.Time, e.TxID = time.Unix(0, at).UTC(), id16(txID)
		if e.Kind == kindTrio {
			out = expandTrio(out, storage.AuditEvent{EntityID: id, TxID: e.TxID, Time: e.Time, Seq: e.Seq, State: e.State, User: e.User},
				e.Type, e.Details)
			continue
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: reading audit events: %w", err)
	}
	// A create's implicit trail lives on its first revision.
	var trio, at int64
	var txID []byte
	var user, state string
	err = a.db.queryRow(ctx, `SELECT trio, at_ns, tx_id, user_id, state FROM revisions WHERE id = ? AND tenant = ? AND version = 1`,
		id[:], tenant).Scan(&trio, &at, &txID, &user, &state)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: reading audit events: %w", err)
	}
	if err == nil && trio > 0 {
		out = expandTrio(out, storage.AuditEvent{EntityID: id, TxID: id16(txID), Time: time.Unix(0, at).UTC(), Seq: int(trio - 1),
			State: state, User: user}, storage.AuditCreate, createStart)
	}
	newer := func(x, y *storage.AuditEvent) bool {
		if !x.Time.Equal(y.Time) {
			return x.Time.After(y.Time)
		}
		return x.Seq > y.Seq
	}
	if !sort.SliceIsSorted(out, func(i, j int) bool { return newer(&out[i], &out[j]) }) {
		sort.SliceStable(out, func(i, j int) bool { return newer(&out[i], &out[j]) })
	}
	return out, nil
}

func (a *Audits) EntityAudit(ctx context.Context, tenant string, id [16]byte, f storage.AuditFilter, offset, limit int) ([]storage.AuditEvent, bool, error) {
	evs, err := a.events(ctx, tenant, id)
	if err != nil {
		return nil, false, err
	}
	out := make([]storage.AuditEvent, 0, min(limit, len(evs)))
	skipped, more := 0, false
	for i := range evs {
		if !storage.AuditMatch(&evs[i], &f) {
			continue
		}
		if skipped < offset {
			skipped++
			continue
		}
		if len(out) == limit {
			more = true
			break
		}
		out = append(out, evs[i])
	}
	return out, more, nil
}

func (a *Audits) FinishedEvent(ctx context.Context, tenant string, id, txID [16]byte) (*storage.AuditEvent, error) {
	evs, err := a.events(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	var found *storage.AuditEvent
	for i := range evs {
		e := &evs[i]
		if e.TxID == txID && e.Kind == storage.AuditStateMachine && e.Type == storage.AuditEventFinish && (found == nil || e.Seq > found.Seq) {
			found = e
		}
	}
	if found == nil {
		return nil, storage.ErrNotFound
	}
	c := *found
	return &c, nil
}
