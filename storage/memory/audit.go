package memory

import (
	"context"
	"sort"
	"sync"
	"time"

	"svc/storage"
)

// Audit events live on the record of the entity they describe (rec.audit,
// guarded by its partition lock like the revisions), so Commit appends
// them inside its critical section with no map of its own to hash into;
// a create and its events become visible together. Events about an
// entity the transaction does not write go to the side log.

// auditLog holds events whose entity is not written by their transaction.
type auditLog struct {
	mu sync.RWMutex
	m  map[auditKey][]storage.AuditEvent
}

type auditKey struct {
	tenant string
	id     [16]byte
}

func (l *auditLog) add(tenant string, e storage.AuditEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[auditKey][]storage.AuditEvent{}
	}
	k := auditKey{tenant, e.EntityID}
	l.m[k] = append(l.m[k], e)
}

// appendAudit records tx's events stamped with the commit instant at. It
// runs with the partition locks of recs (tx's records, in write order)
// held. The events of a transaction are copied into one block, and a
// record's events of this transaction are a capped sub-slice of it: a
// create costs no allocation per entity, a later append copies.
func (s *Entities) appendAudit(tx *storage.Tx, recs []*rec, at int64) {
	if len(tx.Audit) == 0 {
		return
	}
	block := make([]storage.AuditEvent, len(tx.Audit))
	copy(block, tx.Audit)
	size := 0
	for i := range block {
		size += len(block[i].Data)
	}
	// The caller may reuse its buffers.
	data := make([]byte, 0, size)
	stamp := time.Unix(0, at).UTC()
	for i := range block {
		e := &block[i]
		e.TxID, e.User, e.Seq = tx.ID, tx.User, i
		if e.Time.IsZero() {
			e.Time = stamp
		}
		if e.Data != nil {
			n := len(data)
			data = append(data, e.Data...)
			e.Data = data[n:len(data):len(data)]
		}
	}
	j := 0
	for i := 0; i < len(block); {
		id := block[i].EntityID
		k := i + 1
		for k < len(block) && block[k].EntityID == id {
			k++
		}
		run := block[i:k:k]
		i = k
		// Runs usually come in write order.
		var r *rec
		switch {
		case j < len(recs) && recs[j].id == id:
			r = recs[j]
		case j+1 < len(recs) && recs[j+1].id == id:
			j++
			r = recs[j]
		default:
			for x := range recs {
				if recs[x].id == id {
					r, j = recs[x], x
					break
				}
			}
		}
		switch {
		case r == nil:
			for x := range run {
				s.audit.add(tx.Tenant, run[x])
			}
		case r.audit == nil:
			r.audit = run
		default:
			r.audit = append(r.audit, run...)
		}
	}
}

// deleteEvent is the EntityChange of one entity removed by DeleteModel,
// recorded in that same critical section.
func deleteEvent(id, txID [16]byte, at int64, state, user string) storage.AuditEvent {
	return storage.AuditEvent{EntityID: id, TxID: txID, Time: time.Unix(0, at).UTC(), Kind: storage.AuditEntityChange,
		Type: storage.AuditDelete, State: state, User: user}
}

// Audits returns the audit trail of this store.
func (s *Entities) Audits() storage.Audits { return audits{s} }

type audits struct{ s *Entities }

func newer(a, b *storage.AuditEvent) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.After(b.Time)
	}
	return a.Seq > b.Seq
}

// events calls fn for each of an entity's events, most recently appended
// first, under the locks that guard them.
func (a audits) events(tenant string, id [16]byte, fn func(e *storage.AuditEvent) bool) {
	if r := a.s.lookup(tenant, id); r != nil {
		r.part.mu.RLock()
		for i := len(r.audit) - 1; i >= 0; i-- {
			if !fn(&r.audit[i]) {
				r.part.mu.RUnlock()
				return
			}
		}
		r.part.mu.RUnlock()
	}
	l := &a.s.audit
	l.mu.RLock()
	defer l.mu.RUnlock()
	evs := l.m[auditKey{tenant, id}]
	for i := len(evs) - 1; i >= 0; i-- {
		if !fn(&evs[i]) {
			return
		}
	}
}

func (a audits) EntityAudit(ctx context.Context, tenant string, id [16]byte, f storage.AuditFilter, offset, limit int) ([]storage.AuditEvent, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	var out []storage.AuditEvent
	a.events(tenant, id, func(e *storage.AuditEvent) bool {
		if storage.AuditMatch(e, &f) {
			out = append(out, *e)
		}
		return true
	})
	// Commit order is newest-last already unless an event carries its own
	// earlier time; sort only then.
	if !sort.SliceIsSorted(out, func(i, j int) bool { return newer(&out[i], &out[j]) }) {
		sort.SliceStable(out, func(i, j int) bool { return newer(&out[i], &out[j]) })
	}
	if offset >= len(out) {
		return []storage.AuditEvent{}, false, nil
	}
	out = out[offset:]
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

func (a audits) FinishedEvent(ctx context.Context, tenant string, id, txID [16]byte) (*storage.AuditEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var found *storage.AuditEvent
	a.events(tenant, id, func(e *storage.AuditEvent) bool {
		if e.TxID == txID && e.Kind == storage.AuditStateMachine && e.Type == storage.AuditEventFinish {
			c := *e
			found = &c
			return false
		}
		return true
	})
	if found == nil {
		return nil, storage.ErrNotFound
	}
	return found, nil
}
