package memory

import (
	"context"
	"sort"
	"sync"
	"time"

	"svc/storage"
)

// auditLog holds the audit events of an Entities store per (tenant,
// entity). Commit appends to it while it still holds the partition locks
// of the transaction, so the events become visible with the change.
type auditLog struct {
	mu sync.RWMutex
	m  map[auditKey][]storage.AuditEvent
}

type auditKey struct {
	tenant string
	id     [16]byte
}

// append records tx's events stamped with the commit instant at.
func (l *auditLog) append(tx *storage.Tx, at int64) {
	if len(tx.Audit) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[auditKey][]storage.AuditEvent{}
	}
	for i := range tx.Audit {
		e := tx.Audit[i]
		e.TxID, e.User, e.Seq = tx.ID, tx.User, i
		if e.Time.IsZero() {
			e.Time = time.Unix(0, at).UTC()
		}
		// The caller may reuse its buffers.
		if e.Data != nil {
			e.Data = append([]byte(nil), e.Data...)
		}
		k := auditKey{tx.Tenant, e.EntityID}
		l.m[k] = append(l.m[k], e)
	}
}

// Audits returns the audit trail of this store.
func (s *Entities) Audits() storage.Audits { return (*audits)(&s.audit) }

type audits auditLog

func newer(a, b *storage.AuditEvent) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.After(b.Time)
	}
	return a.Seq > b.Seq
}

func (a *audits) EntityAudit(ctx context.Context, tenant string, id [16]byte, f storage.AuditFilter, offset, limit int) ([]storage.AuditEvent, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	a.mu.RLock()
	evs := a.m[auditKey{tenant, id}]
	out := make([]storage.AuditEvent, 0, len(evs))
	for i := range evs {
		if storage.AuditMatch(&evs[i], &f) {
			out = append(out, evs[i])
		}
	}
	a.mu.RUnlock()
	sort.SliceStable(out, func(i, j int) bool { return newer(&out[i], &out[j]) })
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

func (a *audits) FinishedEvent(ctx context.Context, tenant string, id, txID [16]byte) (*storage.AuditEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	evs := a.m[auditKey{tenant, id}]
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		if e.TxID == txID && e.Kind == storage.AuditStateMachine && e.Type == storage.AuditEventFinish {
			c := *e
			return &c, nil
		}
	}
	return nil, storage.ErrNotFound
}
