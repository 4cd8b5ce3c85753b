package entity

import (
	"bytes"
	"context"
	"errors"
	"mime"
	"strconv"
	"time"

	"github.com/google/uuid"

	"svc/infer"
	"svc/platform/apierr"
	"svc/platform/jsondoc"
	"svc/storage"
)

func modified(id [16]byte) *apierr.Error {
	return apierr.New(apierr.EntityModified, "entity has been modified since last read", apierr.P("entityId", uuid.UUID(id).String()))
}

// ifMatchHolds compares an If-Match value to the entity's current
// transaction id; surrounding quotes are stripped (harmless, accepted).
func ifMatchHolds(e *storage.Entity, v string) bool {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	id, err := uuid.Parse(v)
	return err == nil && [16]byte(id) == e.TxID
}

// objectJSON trims b and checks it is a JSON object svc accepts; syntaxMsg
// is the refusal of anything that is not one, context prefixes the others.
func objectJSON(b []byte, syntaxMsg, context string) ([]byte, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, badRequest(syntaxMsg)
	}
	return b, jsondoc.CheckProblem(b, syntaxMsg, context)
}

func transitionName(t string) string {
	if t == "" {
		return "loopback"
	}
	return t
}

// revise validates data for e's model, runs the workflow and builds the
// write, with the engine's events when it ran; strict validation never
// widens the model (merge patch).
//
// Its task changes (arming, cancelling) are appended to tx.Tasks; pending
// task changes already there for the entity count as stored.
func (s *Service) revise(ctx context.Context, a Actor, e *storage.Entity, txID [16]byte, transition string, data []byte, strict bool, tx *storage.Tx) (storage.Write, []storage.AuditEvent, error) {
	m, err := s.model(ctx, a.Tenant, e.Model)
	if err != nil {
		return storage.Write{}, nil, err
	}
	if sg, ok := s.gate.(StrictGate); ok && strict {
		err = sg.Validate(ctx, a.Tenant, e.Model, data)
	} else {
		err = s.gate.Admit(ctx, a.Tenant, e.Model, [][]byte{data})
	}
	if err != nil {
		return storage.Write{}, nil, err
	}
	if err := s.checkKeys(m, data); err != nil {
		return storage.Write{}, nil, err
	}
	st, err := s.onUpdate(ctx, a.Tenant, m, e.ID, txID, e.State, transition, data)
	if err != nil {
		return storage.Write{}, nil, err
	}
	ops, err := s.reconcile(ctx, a.Tenant, e.ID, txID, &st, false, tx.Tasks, "")
	if err != nil {
		return storage.Write{}, nil, err
	}
	w := storage.Write{ID: e.ID, Model: e.Model, State: st.State, Data: st.Data, Transition: transitionName(transition), ExpectVersion: e.Version}
	if err := s.keyWrite(m, &w); err != nil {
		return storage.Write{}, nil, err
	}
	tx.Tasks = append(tx.Tasks, ops...)
	return w, st.Events, nil
}

func (s *Service) commitOne(ctx context.Context, a Actor, w storage.Write) ([16]byte, error) {
	txID, err := txIDFor(ctx)
	if err != nil {
		return txID, err
	}
	ctx, ow := s.ownTx(ctx, a.Tenant, txID)
	defer ow.done()
	return s.commitIn(ctx, a, &storage.Tx{Tenant: a.Tenant, ID: txID, User: a.User, Attribution: a.attribution()}, w, nil, nil)
}

// commitIn commits w in tx, whose id was drawn before the workflow ran so
// the engine could name it; evs are the engine's events of w, if it ran,
// and tx may already hold w's task changes. When the run segmented (seg),
// the commit is TX_post's; the answer still names the entry transaction.
func (s *Service) commitIn(ctx context.Context, a Actor, tx *storage.Tx, w storage.Write, evs []storage.AuditEvent, seg *segment) ([16]byte, error) {
	txID := tx.ID
	tx.Writes = []storage.Write{w}
	if seg != nil {
		seg.finish(tx, &tx.Writes[0])
	}
	stamp(ctx, tx, txID, [][16]byte{w.ID})
	_, err := s.commitOwned(ctx, withAudit(tx, [][]storage.AuditEvent{evs}))
	if errors.Is(err, storage.ErrNotFound) {
		return txID, EntityNotFound(w.ID)
	}
	return txID, err
}

// Update serves PUT /entity/{format}/{id}[/{transition}]: full replacement
// through the named transition or the loopback. A non-empty ifMatch must
// equal the entity's current transaction id (412 otherwise); a writer that
// commits in between makes this one fail with CONFLICT.
func (s *Service) Update(ctx context.Context, a Actor, id [16]byte, format string, body []byte, transition, ifMatch string) ([16]byte, error) {
	if format != "JSON" && format != "XML" {
		return [16]byte{}, badRequest("unsupported format")
	}
	doc, err := s.toJSON(format, body)
	if err != nil {
		return [16]byte{}, err
	}
	doc, err = objectJSON(doc, "invalid JSON", "")
	if err != nil {
		return [16]byte{}, err
	}
	e, err := s.load(ctx, a.Tenant, id)
	if err != nil {
		return [16]byte{}, err
	}
	if ifMatch != "" && !ifMatchHolds(e, ifMatch) {
		return [16]byte{}, modified(id)
	}
	return s.reviseOne(ctx, a, e, transition, doc, false, ifMatch != "")
}

// reviseOne runs the workflow over one entity's new document and commits
// it in a transaction of its own (or the caller's joined one), segmented
// when a COMMIT_BEFORE_DISPATCH processor asks; conditional says a caller
// If-Match guards the first segment.
func (s *Service) reviseOne(ctx context.Context, a Actor, e *storage.Entity, transition string, doc []byte, strict, conditional bool) ([16]byte, error) {
	txID, err := txIDFor(ctx)
	if err != nil {
		return txID, err
	}
	ctx, ow := s.ownTx(ctx, a.Tenant, txID)
	defer ow.done()
	ctx = withProgress(ctx, func(txID [16]byte, ids [][16]byte) any { return Updated{TxID: txID, ID: ids[0]} })
	var seg *segment
	rctx := ctx
	if ow != nil {
		seg = &segment{s: s, a: a, id: e.ID, model: e.Model, transition: transitionName(transition), txID: txID,
			version: e.Version, ifMatch: conditional}
		rctx = withSegment(ctx, seg)
	}
	tx := &storage.Tx{Tenant: a.Tenant, ID: txID, User: a.User, Attribution: a.attribution()}
	w, evs, err := s.revise(rctx, a, e, txID, transition, doc, strict, tx)
	if err != nil {
		return [16]byte{}, err
	}
	// The workflow may have taken long: a client that left meanwhile gets
	// no write it cannot learn about.
	if err := clientGone(ctx); err != nil {
		return [16]byte{}, err
	}
	if strict { // strict validation is the merge patch's
		s.patchPhase(ctx, PatchCommit)
	}
	return s.commitIn(ctx, a, tx, w, evs, seg)
}

// Patch serves PATCH /entity/{format}/{id}[/{transition}] with an RFC 7396
// merge patch. ifMatch is required ("*" = unconditional, entity must exist).
//
// The body's size and nesting are checked against the document limits
// before anything else reads it, the merge is one linear pass, and when
// ctx carries a client check (WithClientGone) the work stops between
// phases and every 64 KB of merging once the client has gone, with
// ErrClientGone and nothing written.
func (s *Service) Patch(ctx context.Context, a Actor, id [16]byte, format, contentType string, ifMatch string, body []byte, transition string) ([16]byte, error) {
	tx, err := s.patch(ctx, a, id, format, contentType, ifMatch, body, transition)
	if errors.Is(err, ErrClientGone) {
		s.patchPhase(ctx, PatchAbandoned)
	}
	return tx, err
}

func (s *Service) patch(ctx context.Context, a Actor, id [16]byte, format, contentType string, ifMatch string, body []byte, transition string) ([16]byte, error) {
	if format != "JSON" {
		return [16]byte{}, apierr.New(apierr.UnsupportedMedia, "PATCH accepts the JSON format only")
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/merge-patch+json", "application/json-patch+json":
	default:
		return [16]byte{}, apierr.New(apierr.UnsupportedMedia, "Content-Type must be application/merge-patch+json")
	}
	if ifMatch == "" {
		return [16]byte{}, apierr.New(apierr.PreconditionNeeded,
			"If-Match is required: send the transactionId from your last read, or * to patch unconditionally")
	}
	if mt == "application/json-patch+json" {
		return [16]byte{}, apierr.New(apierr.NotImplemented, "JSON Patch (RFC 6902) is not supported; use application/merge-patch+json")
	}
	patch := bytes.TrimSpace(body)
	// The limits every document meets (infer.Limits), checked on the
	// patch before any merging: a body nested 10,000 deep is refused
	// after reading its first MaxDepth+1 levels.
	lim := infer.DefaultLimits()
	if len(patch) > lim.MaxBytes {
		return [16]byte{}, limitExceeded("MaxBytes", lim.MaxBytes, "merge patch size")
	}
	if deeperThan(patch, lim.MaxDepth) {
		return [16]byte{}, limitExceeded("MaxDepth", lim.MaxDepth, "merge patch nesting")
	}
	// Checked before the merge too: a patch naming a member twice would
	// keep the last value where a search reads the first.
	if err := jsondoc.CheckProblem(patch, "invalid JSON", ""); err != nil {
		return [16]byte{}, err
	}
	s.patchPhase(ctx, PatchChecked)
	if err := clientGone(ctx); err != nil {
		return [16]byte{}, err
	}
	e, err := s.load(ctx, a.Tenant, id)
	if err != nil {
		return [16]byte{}, err
	}
	if ifMatch != "*" && !ifMatchHolds(e, ifMatch) {
		return [16]byte{}, modified(id)
	}
	s.patchPhase(ctx, PatchLoaded)
	if err := clientGone(ctx); err != nil {
		return [16]byte{}, err
	}
	merged, err := mergePatch(e.Data, patch, mergeOpts{maxBytes: lim.MaxBytes, stop: stopCheck(ctx)})
	if err != nil {
		if _, ok := apierr.As(err); ok {
			return [16]byte{}, err
		}
		return [16]byte{}, badRequest("merge patch: " + err.Error())
	}
	if len(merged) == 0 || merged[0] != '{' {
		return [16]byte{}, badRequest("merge patch result is not an object")
	}
	s.patchPhase(ctx, PatchMerged)
	if err := clientGone(ctx); err != nil {
		return [16]byte{}, err
	}
	return s.reviseOne(ctx, a, e, transition, merged, true, ifMatch != "*")
}

// UpdateItem is one element of a collection update (PUT
// /entity/{format}): the entity, its full replacement as a JSON-encoded
// string, the transition and the expected transaction. Nil members were
// absent. The adapter decodes the array.
type UpdateItem struct {
	ID         *string `json:"id"`
	Payload    *string `json:"payload"`
	Transition string  `json:"transition"`
	IfMatch    string  `json:"ifMatch"`
}

// UpdateCollection replaces entities in chunks of window, one transaction
// each. A stale ifMatch isolates its item into the chunk's failures; any
// other item failure fails the whole chunk. items is not empty (the
// adapter answers an empty collection).
func (s *Service) UpdateCollection(ctx context.Context, a Actor, items []UpdateItem, window int) (*Result, error) {
	if len(items) == 0 {
		return nil, badRequest("collection is empty")
	}
	if err := s.checkCount(len(items)); err != nil {
		return nil, err
	}
	ids := make([][16]byte, len(items))
	docs := make([][]byte, len(items))
	for i := range items {
		it := &items[i]
		if it.ID == nil || *it.ID == "" {
			return nil, badRequest("item " + strconv.Itoa(i) + ": missing id")
		}
		u, err := uuid.Parse(*it.ID)
		if err != nil {
			return nil, badRequest("item " + strconv.Itoa(i) + ": invalid id")
		}
		ids[i] = u
		if it.Payload == nil {
			return nil, badRequest("item " + strconv.Itoa(i) + ": invalid JSON payload")
		}
		d, err := objectJSON([]byte(*it.Payload), "item "+strconv.Itoa(i)+": invalid JSON payload", "item "+strconv.Itoa(i)+": payload")
		if err != nil {
			return nil, err
		}
		docs[i] = d
	}
	return runChunks(ctx, len(items), window, func(ctx context.Context, lo, hi int) (Chunk, error) {
		txID, err := txIDFor(ctx)
		if err != nil {
			return Chunk{}, err
		}
		ctx, ow := s.ownTx(ctx, a.Tenant, txID)
		defer ow.done()
		tx := &storage.Tx{Tenant: a.Tenant, ID: txID, User: a.User, Attribution: a.attribution()}
		var evs [][]storage.AuditEvent // per write, parallel to tx.Writes
		c := Chunk{TxID: txID, IDs: [][16]byte{}}
		// Several saves of one entity in a transaction make one revision.
		pending := map[[16]byte]int{}
		// A chunk of one item may segment (COMMIT_BEFORE_DISPATCH).
		var seg *segment
		// The refusals of isolated items commit with their siblings.
		var aborted []storage.AuditEvent
		for i := lo; i < hi; i++ {
			it := &items[i]
			e, err := s.load(ctx, a.Tenant, ids[i])
			if err != nil {
				if _, ok := apierr.As(err); ok {
					err = apierr.New(apierr.EntityNotFound, "item "+strconv.Itoa(i)+": entity "+uuid.UUID(ids[i]).String()+" not found",
						apierr.P("entityId", uuid.UUID(ids[i]).String()))
				}
				return Chunk{}, err
			}
			if it.IfMatch != "" && !ifMatchHolds(e, it.IfMatch) {
				c.Failed = append(c.Failed, Failure{ID: ids[i], Index: i - lo, Err: modified(ids[i])})
				aborted = append(aborted, abortedEvents(e, txID, it.Transition, it.IfMatch)...)
				continue
			}
			if p, ok := pending[e.ID]; ok {
				e.State = tx.Writes[p].State
			}
			ictx := ctx
			if hi-lo == 1 && ow != nil {
				seg = &segment{s: s, a: a, id: e.ID, model: e.Model, transition: transitionName(it.Transition), txID: txID,
					version: e.Version, ifMatch: it.IfMatch != ""}
				ictx = withSegment(ctx, seg)
			}
			w, wevs, err := s.revise(ictx, a, e, txID, it.Transition, docs[i], false, tx)
			if err != nil {
				return Chunk{}, itemErr(i, err)
			}
			if p, ok := pending[e.ID]; ok {
				tx.Writes[p].State, tx.Writes[p].Data, tx.Writes[p].Transition = w.State, w.Data, w.Transition
				tx.Writes[p].Keyed, tx.Writes[p].Claims = w.Keyed, w.Claims
				// Every run of the revision is on the trail, in order.
				if wevs != nil || evs[p] != nil {
					evs[p] = append(evs[p], wevs...)
				}
				continue
			}
			if ow != nil && hi-lo > 1 {
				ow.cur.show(w, false, a.User)
			}
			pending[e.ID] = len(tx.Writes)
			tx.Writes = append(tx.Writes, w)
			evs = append(evs, wevs)
			c.IDs = append(c.IDs, e.ID)
		}
		if seg != nil && len(tx.Writes) == 1 {
			seg.finish(tx, &tx.Writes[0])
		}
		withAudit(tx, evs)
		tx.Audit = append(tx.Audit, aborted...)
		if _, err := s.commitOwned(ctx, tx); err != nil {
			return Chunk{}, err
		}
		return c, nil
	})
}

// Deleted is the result of DELETE /entity/{id}.
type Deleted struct {
	ID    [16]byte
	Model storage.ModelKey
	TxID  [16]byte
}

// Delete serves DELETE /entity/{id}: a tombstone revision; no workflow runs.
func (s *Service) Delete(ctx context.Context, a Actor, id [16]byte) (*Deleted, error) {
	e, err := s.load(ctx, a.Tenant, id)
	if err != nil {
		return nil, err
	}
	txID, err := s.commitOne(ctx, a, storage.Write{ID: id, Model: e.Model, Delete: true, ExpectVersion: e.Version})
	if err != nil {
		return nil, err
	}
	return &Deleted{ID: id, Model: e.Model, TxID: txID}, nil
}

// ModelDeleted is the result of DELETE /entity/{name}/{version}.
type ModelDeleted struct {
	ModelID uuid.UUID
	Matched int64
	Removed int64
	// IDs are the matched ids of a conditional delete; empty for delete-all.
	IDs [][16]byte
}

// DeleteByModel serves DELETE /entity/{name}/{version}. An empty or
// whitespace body deletes every live entity of the model in one
// transaction (at is ignored, docs/decisions/0014-entities.md); a condition body
// deletes the matching ones, see deleteWhere.
func (s *Service) DeleteByModel(ctx context.Context, a Actor, key storage.ModelKey, body []byte, at *time.Time) (*ModelDeleted, error) {
	if _, err := s.model(ctx, a.Tenant, key); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) > 0 || joinedFrom(ctx) != nil {
		// Inside a joined transaction even delete-all goes entity by
		// entity: the deletes join the buffer, over what it holds.
		return s.deleteWhere(ctx, a, key, body, at)
	}
	txID, err := newTimeID()
	if err != nil {
		return nil, err
	}
	n, _, err := s.store.DeleteModel(ctx, a.Tenant, key, txID, a.User, nil)
	if err != nil {
		return nil, err
	}
	return &ModelDeleted{ModelID: ModelID(key), Matched: n, Removed: n}, nil
}
