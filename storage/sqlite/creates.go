package sqlite

import (
	"fmt"
	"strings"

	"svc/storage"
)

// Creates are written many rows to a statement. A transaction's run of
// creates (a collection, mostly) shares its tenant, model, instant,
// transaction id, user, transition and attribution: those are bound once,
// as numbered parameters every row refers to, and each row binds only its
// id, state, trio and document. Per entity this drops the statement
// executions from two to two per chunk and the values bound from 26 to 6:
// in a profile of collection ingest, binding (a C copy of every value) and
// running a statement per row were a third of the server's CPU.

// createShared are the parameters every row of a create statement shares.
// A run that records change events binds their code (changes.go) once
// more, after the rows' parameters.
const createShared = 10 // ?1 tenant ?2 model name ?3 model version ?4 at ?5 tx id ?6 transition ?7 user ?8 user kind ?9 exec id ?10 exec kind

// createChunks are the row counts of the prepared create statements; a run
// of n creates is written as the fewest chunks of these sizes.
var createChunks = [...]int{64, 16, 4, 1}

const insertEntity = `INSERT INTO entities (id, tenant, model_name, model_version, state, version, deleted, created_ns, updated_ns)
	VALUES (?, ?, ?, ?, ?, 1, 0, ?, ?) ON CONFLICT DO NOTHING`

// createSQL[k] are the entity and revision inserts of createChunks[k] rows,
// and the revision insert of a run that records change events (ev, the
// parameter after the rows').
var createSQL = func() (q [len(createChunks)][3]string) {
	for k, n := range createChunks {
		var e, r, v strings.Builder
		e.WriteString(`INSERT INTO entities (id, tenant, model_name, model_version, state, version, deleted, created_ns, updated_ns) VALUES `)
		r.WriteString(`INSERT INTO revisions (id, tenant, version, model_name, model_version, state, change, tx_id, transition, user_id,
	created_ns, at_ns, user_kind, exec_id, exec_kind, trio, data) VALUES `)
		v.WriteString(`INSERT INTO revisions (id, tenant, version, model_name, model_version, state, change, tx_id, transition, user_id,
	created_ns, at_ns, user_kind, exec_id, exec_kind, trio, data, ev) VALUES `)
		for i := 0; i < n; i++ {
			if i > 0 {
				e.WriteString(", ")
				r.WriteString(", ")
				v.WriteString(", ")
			}
			// Entity rows number their own parameters (id, state), revision
			// rows theirs (id, state, trio, data), both after the shared ones.
			ei := createShared + 2*i + 1
			fmt.Fprintf(&e, "(?%d, ?1, ?2, ?3, ?%d, 1, 0, ?4, ?4)", ei, ei+1)
			ri := createShared + 4*i + 1
			fmt.Fprintf(&r, "(?%d, ?1, 1, ?2, ?3, ?%d, 0, ?5, ?6, ?7, ?4, ?4, ?8, ?9, ?10, ?%d, ?%d)", ri, ri+1, ri+2, ri+3)
			fmt.Fprintf(&v, "(?%d, ?1, 1, ?2, ?3, ?%d, 0, ?5, ?6, ?7, ?4, ?4, ?8, ?9, ?10, ?%d, ?%d, ?%d)", ri, ri+1, ri+2, ri+3, createShared+4*n+1)
		}
		e.WriteString(" ON CONFLICT DO NOTHING")
		q[k] = [3]string{e.String(), r.String(), v.String()}
	}
	return q
}()

// creates collects a run of consecutive creates of one transaction that
// share everything but id, state, trio and document.
type creates struct {
	shared [createShared]any
	ev     any   // the run's change event code, nil for none
	idx    []int // indexes into tx.Writes
	// args are reused between chunks.
	eargs, rargs []any
	// small backs idx, eargs and rargs for a transaction of a few creates
	// (a single create): no allocation for them.
	smallIdx [4]int
	smallE   [createShared + 2*4]any
	smallR   [createShared + 4*4 + 1]any
}

// fits says whether write i can join the run.
func (c *creates) fits(wr *storage.Write, uk, ei, ek, ev any) bool {
	if len(c.idx) == 0 {
		return true
	}
	s := &c.shared
	return s[1] == any(wr.Model.Name) && s[2] == any(wr.Model.Version) && s[5] == any(wr.Transition) &&
		s[7] == uk && s[8] == ei && s[9] == ek && c.ev == ev
}

func (c *creates) add(tx *storage.Tx, i int, at int64, uk, ei, ek, ev any) {
	if len(c.idx) == 0 {
		wr := &tx.Writes[i]
		c.shared = [createShared]any{tx.Tenant, wr.Model.Name, wr.Model.Version, at, tx.ID[:], wr.Transition, tx.User, uk, ei, ek}
		c.ev = ev
		if c.idx == nil {
			c.idx = c.smallIdx[:0]
		}
	}
	c.idx = append(c.idx, i)
}

// flush writes the run.
func (c *creates) flush(w *wtx, tx *storage.Tx, plan *auditPlan) error {
	if len(c.idx) == 1 {
		// One create (a single create's transaction): plain statements.
		// Numbered parameters cost the driver (when the writer runs
		// through it, cwrite.go) a name lookup each, which for one row is
		// more than binding the shared values again.
		i := c.idx[0]
		wr, s := &tx.Writes[i], &c.shared
		c.idx = c.idx[:0]
		res, err := w.exec(insertEntity, wr.ID[:], s[0], s[1], s[2], wr.State, s[3], s[3])
		if err != nil {
			return fmt.Errorf("sqlite: inserting entity: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return storage.ErrExists
		}
		if c.ev != nil {
			_, err = w.exec(insertRevisionEv, wr.ID[:], s[0], 1, s[1], s[2], wr.State, chCreated,
				s[4], s[5], s[6], s[3], s[3], s[7], s[8], s[9], plan.trio[i], docArg(wr.Data), c.ev, nil, nil, nil)
		} else {
			_, err = w.exec(insertRevision, wr.ID[:], s[0], 1, s[1], s[2], wr.State, chCreated,
				s[4], s[5], s[6], s[3], s[3], s[7], s[8], s[9], plan.trio[i], docArg(wr.Data))
		}
		if err != nil {
			return fmt.Errorf("sqlite: inserting revision: %w", err)
		}
		return nil
	}
	rest := c.idx
	for len(rest) > 0 {
		k := 0
		for createChunks[k] > len(rest) {
			k++
		}
		n := createChunks[k]
		chunk := rest[:n]
		rest = rest[n:]
		if cap(c.eargs) < createShared+2*n {
			if n <= 4 {
				c.eargs, c.rargs = c.smallE[:0], c.smallR[:0]
			} else {
				c.eargs, c.rargs = make([]any, 0, createShared+2*n), make([]any, 0, createShared+4*n+1)
			}
		}
		ea := append(c.eargs[:0], c.shared[:]...)
		ra := append(c.rargs[:0], c.shared[:]...)
		for _, i := range chunk {
			wr := &tx.Writes[i]
			ea = append(ea, wr.ID[:], wr.State)
			ra = append(ra, wr.ID[:], wr.State, plan.trio[i], docArg(wr.Data))
		}
		c.eargs, c.rargs = ea, ra
		res, err := w.exec(createSQL[k][0], ea...)
		if err != nil {
			return fmt.Errorf("sqlite: inserting entity: %w", err)
		}
		if got, _ := res.RowsAffected(); got != int64(n) {
			return storage.ErrExists
		}
		q := createSQL[k][1]
		if c.ev != nil {
			q, ra = createSQL[k][2], append(ra, c.ev)
			c.rargs = ra
		}
		if _, err := w.exec(q, ra...); err != nil {
			return fmt.Errorf("sqlite: inserting revision: %w", err)
		}
	}
	c.idx = c.idx[:0]
	clear(c.eargs)
	clear(c.rargs)
	return nil
}
