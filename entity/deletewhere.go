package entity

import (
	"bytes"
	"context"
	"errors"
	"time"

	"svc/predicate"
	"svc/storage"
)

// deleteWhere deletes the live entities of the model that match the
// condition body, selected as of at (now when nil), in one transaction.
// Each delete expects the entity's current version: an entity changed
// after it was read makes the whole request fail with CONFLICT and delete
// nothing; one that matched at the instant but is deleted since is
// skipped (matched, not removed). Every delete records its EntityChange.
//
// Inside a joined transaction the selection reads the transaction's
// uncommitted writes too (overlay.Entities), and the deletes join its
// buffer; an empty body there selects every entity.
func (s *Service) deleteWhere(ctx context.Context, a Actor, key storage.ModelKey, body []byte, at *time.Time) (*ModelDeleted, error) {
	var cond *predicate.Condition
	var err error
	if len(bytes.TrimSpace(body)) > 0 {
		if cond, err = s.condition(ctx, a.Tenant, key, body); err != nil {
			return nil, err
		}
	}
	type hit struct {
		id      [16]byte
		version int64
	}
	var hits []hit
	// Every function condition is answered before anything is written:
	// a member failure fails the request with nothing deleted.
	err = s.scanMatching(ctx, a.Tenant, key, at, cond, func(e *storage.Entity) error {
		hits = append(hits, hit{e.ID, e.Version})
		return nil
	})
	if err != nil {
		return nil, err
	}
	d := &ModelDeleted{ModelID: ModelID(key), Matched: int64(len(hits)), IDs: make([][16]byte, len(hits))}
	tx := &storage.Tx{Tenant: a.Tenant, User: a.User, Attribution: a.attribution(), Writes: make([]storage.Write, 0, len(hits))}
	for i, h := range hits {
		d.IDs[i] = h.id
		if at != nil {
			// Selected in the past: delete what the entity is now.
			cur, err := s.store.Get(ctx, a.Tenant, h.id)
			if errors.Is(err, storage.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			h.version = cur.Version
		}
		tx.Writes = append(tx.Writes, storage.Write{ID: h.id, Model: key, Delete: true, ExpectVersion: h.version})
	}
	if len(tx.Writes) == 0 {
		return d, nil
	}
	if tx.ID, err = txIDFor(ctx); err != nil {
		return nil, err
	}
	if joinedFrom(ctx) != nil {
		if _, err := s.commitOwned(ctx, withAudit(tx, nil)); err != nil {
			return nil, err
		}
		d.Removed = int64(len(tx.Writes))
		return d, nil
	}
	if _, err := s.store.Commit(ctx, withAudit(tx, nil)); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			// Deleted between the read and the commit: a concurrent
			// change won.
			return nil, storage.ErrConflict
		}
		return nil, err
	}
	d.Removed = int64(len(tx.Writes))
	return d, nil
}
