package changefeed

import (
	"context"
	"time"

	"svc/storage"
)

// Recorder is storage.Entities that asks the engine to record a change
// event for every entity a commit writes in a watched model
// (storage.Tx.Changes). With nothing watched, Commit is the engine's.
type Recorder struct {
	storage.Entities
	w *Watched
	// committed is told after a commit that recorded events (the node's
	// hub wakes its consumers); nil does nothing.
	committed func()
}

// NewRecorder wraps e.
func NewRecorder(e storage.Entities, w *Watched, committed func()) *Recorder {
	return &Recorder{Entities: e, w: w, committed: committed}
}

func (r *Recorder) Commit(ctx context.Context, tx *storage.Tx) (time.Time, error) {
	if r.w.empty() || tx.Changes != nil {
		return r.Entities.Commit(ctx, tx)
	}
	tx.Changes = changesOf(tx, r.w)
	if len(tx.Changes) == 0 {
		tx.Changes = nil
		return r.Entities.Commit(ctx, tx)
	}
	at, err := r.Entities.Commit(ctx, tx)
	// A caller may retry tx: the set may have changed by then.
	tx.Changes = nil
	if err == nil && r.committed != nil {
		r.committed()
	}
	return at, err
}

// DeleteModel is the engine's, asking it to record one DELETE event per
// entity it removes (in its transaction) when the model is watched.
func (r *Recorder) DeleteModel(ctx context.Context, tenant string, model storage.ModelKey, txID [16]byte, user string,
	changes *storage.ModelDeleteChanges) (int64, time.Time, error) {
	if changes == nil {
		if x, ok := r.w.lookup(tenant, model); ok {
			// A body condition is tested on a DELETE's body before.
			changes = &storage.ModelDeleteChanges{WantBefore: x.before || x.body}
		}
	}
	n, at, err := r.Entities.DeleteModel(ctx, tenant, model, txID, user, changes)
	if err == nil && changes != nil && n > 0 && r.committed != nil {
		r.committed()
	}
	return n, at, err
}

// changesOf is one change per entity tx writes in a watched model: the
// state before (filled by the engine) to the state after its last write
// in tx. An entity created and deleted in the same commit was never seen
// by anyone and gives none.
func changesOf(tx *storage.Tx, w *Watched) []storage.Change {
	var out []storage.Change
	for i := range tx.Writes {
		wr := &tx.Writes[i]
		x, ok := w.lookup(tx.Tenant, wr.Model)
		if !ok {
			continue
		}
		j := -1
		for k := range out {
			if out[k].EntityID == wr.ID {
				j = k
				break
			}
		}
		if j < 0 {
			kind := storage.KindUpdate
			if wr.ExpectVersion == 0 {
				kind = storage.KindCreate
			}
			out = append(out, storage.Change{EntityID: wr.ID, Model: wr.Model, Kind: kind, Transition: wr.Transition, WantBefore: x.before})
			j = len(out) - 1
		}
		c := &out[j]
		c.ToState, c.BodyAfter = wr.State, nil
		if wr.Delete {
			if c.Kind == storage.KindCreate {
				out = append(out[:j], out[j+1:]...)
				continue
			}
			c.Kind = storage.KindDelete
			// A DELETE has no body after: a body condition, or a
			// subscriber that asked for bodies, reads the body before,
			// as for a whole-model delete.
			c.WantBefore = c.WantBefore || x.body
		} else if x.body {
			c.BodyAfter = wr.Data
		}
	}
	return out
}
