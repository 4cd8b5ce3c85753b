package memory

import (
	"context"
	"sort"
	"sync"
	"time"

	"svc/storage"
)

// Audit events live in the partition of the entity they describe
// (part.audit, by record slot, guarded by the partition lock like the
// revisions), so Commit appends them inside its critical section; a create
// and its events become visible together. The common create's trail is
// implicit in its first revision (implicitTrio) and takes no entry. Events about an
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

// memTx is what the events of one transaction share.
type memTx struct {
	id   [16]byte
	user string
	// attr is the attribution of the transaction's revisions (nil for
	// audit-only records).
	attr *storage.Attribution
}

// memEvent is an audit event as a record keeps it: the entity is the
// record's, the transaction shared, the kind a small code. 96 bytes where
// a storage.AuditEvent is 184 (BenchmarkAuditHeapPer100k).
type memEvent struct {
	at      int64
	tx      *memTx
	typ     string
	state   string
	details string
	data    []byte
	seq     int32
	kind    uint8
}

var kindNames = [...]string{storage.AuditEntityChange, storage.AuditStateMachine, storage.AuditSystem}

// kindTrio codes the three-event trail of trioOf in one memEvent.
const kindTrio = uint8(len(kindNames))

func kindCode(k string) (uint8, bool) {
	for i, n := range kindNames {
		if n == k {
			return uint8(i), true
		}
	}
	return 0, false
}

// each calls fn with the events m holds (one, or a trio's three), most
// recent first, until fn returns false; it reports whether fn always
// returned true. fn gets one variable: it copies what it keeps.
func (m *memEvent) each(id [16]byte, fn func(e *storage.AuditEvent) bool) bool {
	if m.kind != kindTrio {
		e := m.event(id)
		return fn(&e)
	}
	e := storage.AuditEvent{EntityID: id, TxID: m.tx.id, User: m.tx.user, Time: time.Unix(0, m.at).UTC(), Seq: int(m.seq) + 2,
		Kind: storage.AuditEntityChange, Type: m.typ, State: m.state}
	if !fn(&e) {
		return false
	}
	e = storage.AuditEvent{EntityID: id, TxID: m.tx.id, User: m.tx.user, Time: time.Unix(0, m.at).UTC(), Seq: int(m.seq) + 1,
		Kind: storage.AuditStateMachine, Type: storage.AuditEventFinish, State: m.state, Details: trioFinishDetail, Data: trioFinishData}
	if !fn(&e) {
		return false
	}
	e = storage.AuditEvent{EntityID: id, TxID: m.tx.id, User: m.tx.user, Time: time.Unix(0, m.at).UTC(), Seq: int(m.seq),
		Kind: storage.AuditStateMachine, Type: trioStart, State: m.state, Details: m.details}
	return fn(&e)
}

func (m *memEvent) event(id [16]byte) storage.AuditEvent {
	return storage.AuditEvent{EntityID: id, TxID: m.tx.id, User: m.tx.user, Time: time.Unix(0, m.at).UTC(), Seq: int(m.seq),
		Kind: kindNames[m.kind], Type: m.typ, State: m.state, Details: m.details, Data: m.data}
}

// appendAudit records tx's events stamped with the commit instant at. It
// runs with the partition locks of recs (tx's records, in write order)
// held. The events of a transaction are converted into one block, and a
// record's events of this transaction are a capped sub-slice of it: a
// create costs no allocation per entity, a later append copies. The
// entity service's own trail of a write without a workflow engine (start,
// finish, change: see trioOf) takes one slot of the block instead of three.
func (s *Entities) appendAudit(tx *storage.Tx, recs []wrec, at int64) {
	if len(tx.Audit) == 0 {
		return
	}
	mt := &memTx{id: tx.ID, user: tx.User, attr: tx.Attribution}
	var alt *memTx
	// Size the block: an implicit trio takes no slot, a trio one.
	slots, size, j := 0, 0, 0
	for i := 0; i < len(tx.Audit); {
		k := runEnd(tx.Audit, i)
		r := findRec(recs, &j, tx.Audit[i].EntityID)
		switch {
		case implicitTrio(tx, r, tx.Audit[i:k]):
		case k-i == 3 && trioOf(tx, tx.Audit[i:k]):
			slots++
		default:
			slots += k - i
			for x := i; x < k; x++ {
				size += len(tx.Audit[x].Data)
			}
		}
		i = k
	}
	block := make([]memEvent, slots)
	// The caller may reuse its buffers.
	var data []byte
	if size > 0 {
		data = make([]byte, 0, size)
	}
	j = 0
	b := 0
	for i := 0; i < len(tx.Audit); {
		id := tx.Audit[i].EntityID
		k := runEnd(tx.Audit, i)
		r := findRec(recs, &j, id)
		if implicitTrio(tx, r, tx.Audit[i:k]) {
			r.p.rev(r.r.last).trio = int32(tx.AuditSeq+i) + 1
			i = k
			continue
		}
		trio := k-i == 3 && trioOf(tx, tx.Audit[i:k])
		need := k - i
		if trio {
			need = 1
		}
		if len(block)-b < need {
			// Sized as implicit above, but an earlier run of this entity
			// in the same transaction came first.
			block, b = make([]memEvent, need), 0
		}
		b0 := b
		if trio {
			e := &tx.Audit[i]
			block[b] = memEvent{at: at, tx: mt, typ: tx.Audit[i+2].Type, state: e.State, details: e.Details, seq: int32(tx.AuditSeq + i), kind: kindTrio}
			b++
		} else {
			for x := i; x < k; x++ {
				e := &tx.Audit[x]
				code, known := kindCode(e.Kind)
				if !known {
					// An unknown kind cannot be coded: keep the event whole.
					c := *e
					if c.TxID == ([16]byte{}) {
						c.TxID = tx.ID
					}
					c.User, c.Seq = tx.User, tx.AuditSeq+x
					if c.Time.IsZero() {
						c.Time = time.Unix(0, at).UTC()
					}
					s.audit.add(tx.Tenant, c)
					b++
					continue
				}
				owner := mt
				if e.TxID != ([16]byte{}) && e.TxID != tx.ID {
					// A segmented run's events name the entry transaction.
					if alt == nil || alt.id != e.TxID {
						alt = &memTx{id: e.TxID, user: tx.User}
					}
					owner = alt
				}
				m := &block[b]
				b++
				*m = memEvent{at: at, tx: owner, typ: e.Type, state: e.State, details: e.Details, seq: int32(tx.AuditSeq + x), kind: code}
				if !e.Time.IsZero() {
					m.at = e.Time.UnixNano()
				}
				if e.Data != nil {
					n := len(data)
					data = append(data, e.Data...)
					m.data = data[n:len(data):len(data)]
				}
			}
		}
		run := block[b0:b:b]
		i = k
		if r == nil {
			for x := range run {
				if run[x].tx == nil {
					continue // kept whole above
				}
				// each gives a trio newest first; the log keeps commit order.
				var evs []storage.AuditEvent
				run[x].each(id, func(e *storage.AuditEvent) bool { evs = append(evs, *e); return true })
				for y := len(evs) - 1; y >= 0; y-- {
					s.audit.add(tx.Tenant, evs[y])
				}
			}
			continue
		}
		p := r.p
		if p.audit == nil {
			p.audit = map[uint32][]memEvent{}
		}
		if r.r.flags&recAudit == 0 && !hasHoles(run) {
			p.audit[r.h] = run
			r.r.flags |= recAudit
			continue
		}
		evs := p.audit[r.h]
		for x := range run {
			if run[x].tx != nil {
				evs = append(evs, run[x])
			}
		}
		p.audit[r.h] = evs
		r.r.flags |= recAudit
	}
}

// findRec is the record of recs (tx's records in write order) with id, or
// nil; j is a cursor, since runs usually come in write order.
func findRec(recs []wrec, j *int, id [16]byte) *wrec {
	switch {
	case *j < len(recs) && recs[*j].r.id == id:
		return &recs[*j]
	case *j+1 < len(recs) && recs[*j+1].r.id == id:
		*j++
		return &recs[*j]
	}
	for x := range recs {
		if recs[x].r.id == id {
			*j = x
			return &recs[x]
		}
	}
	return nil
}

// createStart is the details of the START event of a create's trail.
const createStart = "State machine started"

// implicitTrio says whether evs, the events of r in tx, are the no-engine
// trail of r's create (trioOf, with the create's details and change
// type, in the state the create wrote) and r has no other event yet.
// Such a trail needs nothing but its Seq: the rest is the first
// revision's (rev.trio; audits.events reads it back as the three events).
// That is the common create, and it costs no event slot at all.
func implicitTrio(tx *storage.Tx, r *wrec, evs []storage.AuditEvent) bool {
	if r == nil || len(evs) != 3 || r.r.flags&recAudit != 0 || r.r.nrev != 1 {
		return false
	}
	v := r.p.rev(r.r.last)
	return v.txID == tx.ID && !v.own && v.trio == 0 && v.change == chCreated && evs[0].Details == createStart &&
		evs[2].Type == storage.AuditCreate && evs[0].State == r.p.strs[v.state] && trioOf(tx, evs)
}

// runEnd is the end of the run of events about the entity of evs[i].
func runEnd(evs []storage.AuditEvent, i int) int {
	k := i + 1
	for k < len(evs) && evs[k].EntityID == evs[i].EntityID {
		k++
	}
	return k
}

// The fixed parts of the trail entity.withAudit writes for a write that
// ran no workflow engine.
const (
	trioStart        = "STATE_MACHINE_START"
	trioFinishDetail = "State machine finished"
)

var trioFinishData = []byte(`{"success":true}`)

// trioOf says whether evs (one entity's events of tx) are exactly the
// trail of a write without an engine: STATE_MACHINE_START (any details),
// STATE_MACHINE_FINISH with details "State machine finished" and data
// {"success":true}, then the EntityChange, all in one state, stamped with
// the commit instant (no time of their own) and of tx itself. Such a trail
// is kept as one kindTrio event (its START's details, the change's type)
// and read back as the same three events (memEvent.each).
func trioOf(tx *storage.Tx, evs []storage.AuditEvent) bool {
	a, f, c := &evs[0], &evs[1], &evs[2]
	for _, e := range evs {
		if !e.Time.IsZero() || (e.TxID != ([16]byte{}) && e.TxID != tx.ID) {
			return false
		}
	}
	return a.Kind == storage.AuditStateMachine && a.Type == trioStart && a.Data == nil &&
		f.Kind == storage.AuditStateMachine && f.Type == storage.AuditEventFinish && f.State == a.State &&
		f.Details == trioFinishDetail && f.Data != nil && string(f.Data) == string(trioFinishData) &&
		c.Kind == storage.AuditEntityChange && c.State == a.State && c.Details == "" && c.Data == nil
}

func hasHoles(run []memEvent) bool {
	for i := range run {
		if run[i].tx == nil {
			return true
		}
	}
	return false
}

// deleteEvents makes the EntityChange events of one DeleteModel.
type deleteEvents struct {
	tx *memTx
	at int64
}

func newDeleteEvents(txID [16]byte, user string, at int64) deleteEvents {
	return deleteEvents{tx: &memTx{id: txID, user: user}, at: at}
}

func (d deleteEvents) event(state string) memEvent {
	return memEvent{at: d.at, tx: d.tx, typ: storage.AuditDelete, state: state} // kind 0: EntityChange
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
	if wr, ok := a.s.lookup(tenant, id); ok {
		p, r := wr.p, wr.r
		p.mu.RLock()
		if r.flags&recAudit != 0 {
			evs := p.audit[wr.h]
			for i := len(evs) - 1; i >= 0; i-- {
				if !evs[i].each(id, fn) {
					p.mu.RUnlock()
					return
				}
			}
		}
		// The create's implicit trail is the record's oldest.
		if fr := p.first(r); fr != 0 && p.rev(fr).trio != 0 {
			v := p.rev(fr)
			m := memEvent{at: v.at, tx: &memTx{id: v.txID, user: p.strs[v.user]}, typ: storage.AuditCreate, state: p.strs[v.state],
				details: createStart, seq: v.trio - 1, kind: kindTrio}
			if !m.each(id, fn) {
				p.mu.RUnlock()
				return
			}
		}
		p.mu.RUnlock()
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
