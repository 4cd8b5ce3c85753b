package entity

import (
	"context"
	"errors"

	"svc/audit"
	"svc/storage"
	"svc/workflow"
)

// segment is the workflow.Segmenter of a write that holds one entity in
// its transaction: single create and update, and one-item chunks. A
// COMMIT_BEFORE_DISPATCH processor makes it commit the entity as the run
// has it (TX_pre) and draw the id of the transaction the run continues in
// (TX_post). The write then finishes in TX_post with a compare-and-set on
// the revision TX_pre wrote, while the response keeps reporting the entry
// transaction. Writes holding several entities get no segment: committing
// one of them early would break the others' all-or-nothing.
type segment struct {
	s     *Service
	a     Actor
	id    [16]byte
	model storage.ModelKey
	// transition is the write's transitionForLatestSave.
	transition string
	// txID is the transaction the next commit uses: the entry
	// transaction until the first segment, then TX_post.
	txID [16]byte
	// version is the revision the next commit expects (0 = create).
	version int64
	// ifMatch: the caller sent If-Match, so a lost compare-and-set at
	// TX_pre is its 412 rather than a retryable conflict.
	ifMatch bool
	// n counts committed segments; seq counts the audit events they
	// wrote under the entry transaction's id, so later ones follow them.
	n, seq int
	// run is the engine run on the entity; its token moves on to TX_post.
	run *workflow.Run
}

type segmentKey struct{}

func withSegment(ctx context.Context, g *segment) context.Context {
	return context.WithValue(ctx, segmentKey{}, g)
}

func segmentFrom(ctx context.Context) workflow.Segmenter {
	if g, _ := ctx.Value(segmentKey{}).(*segment); g != nil {
		return g
	}
	return nil
}

// CommitBeforeDispatch implements workflow.Segmenter.
func (g *segment) CommitBeforeDispatch(ctx context.Context, sg *workflow.Segment) (string, error) {
	evs, err := audit.FromWorkflow(sg.Events)
	if err != nil {
		return "", err
	}
	if evs == nil {
		evs = []storage.AuditEvent{}
	}
	w := storage.Write{ID: g.id, Model: g.model, State: sg.Entity.Meta.State, Data: sg.Entity.Data,
		Transition: g.transition, ExpectVersion: g.version}
	if err := g.s.keyWriteOf(ctx, g.a.Tenant, &w); err != nil {
		return "", err
	}
	tx := withAudit(&storage.Tx{Tenant: g.a.Tenant, ID: g.txID, User: g.a.User, Attribution: g.a.attribution(), Writes: []storage.Write{w}, AuditSeq: g.seq}, [][]storage.AuditEvent{evs})
	// Callbacks that joined TX_pre commit with it.
	ow, _ := ctx.Value(ownerKey{}).(*owner)
	if ow != nil {
		ow.cur.seal(tx)
	}
	if _, err := g.s.store.Commit(ctx, tx); err != nil {
		switch {
		case errors.Is(err, storage.ErrUniqueViolation):
			return "", commitErr(err)
		case errors.Is(err, storage.ErrConflict) && g.ifMatch && g.n == 0:
			return "", modified(g.id)
		case errors.Is(err, storage.ErrNotFound):
			return "", EntityNotFound(g.id)
		case errors.Is(err, storage.ErrConflict), errors.Is(err, storage.ErrUnavailable):
			return "", AsAPI(err)
		}
		return "", err
	}
	next, err := newTimeID()
	if err != nil {
		return "", err
	}
	g.txID, g.version = next, g.version+1
	g.n++
	g.seq += len(tx.Audit)
	if ow == nil {
		return "", nil
	}
	// The run continues in TX_post: later dispatches carry its token, and
	// so does this one when startNewTxOnDispatch asks for it.
	ow.cur = g.s.joins.newOpenTx(g.a.Tenant, next)
	tok := ow.cur.Token()
	if g.run != nil {
		g.run.TxToken, g.run.MintTxToken, g.run.Savepoints = tok, nil, ow.cur
		g.run.Publish = publisher(ow.cur, g.id, g.model, false, g.a.User)
	}
	if sg.StartNewTx {
		return tok, nil
	}
	return "", nil
}

// finish points the final write at TX_post when the run segmented.
func (g *segment) finish(tx *storage.Tx, w *storage.Write) {
	if g.n == 0 {
		return
	}
	tx.ID = g.txID
	tx.AuditSeq = g.seq
	w.ExpectVersion = g.version
}
