package entity

import (
	"context"
	"errors"
	"strings"
	"time"

	"svc/platform/apierr"
	"svc/storage"
)

// ParseInstant reads a pointInTime leniently (docs/decisions/0014-entities.md): an
// RFC 3339 date-time, a missing offset meaning UTC, a space where an
// unencoded '+' was. A value given to millisecond (or microsecond)
// precision covers that whole unit, so a read at a truncated timeOfChange
// still returns that revision. An instant outside the range the engines
// store (storage.InstantInRange) is refused like one that does not parse.
func ParseInstant(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, ' '); i > 10 {
		s = s[:i] + "+" + s[i+1:]
	}
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t, err = time.Parse("2006-01-02T15:04:05.999999999", s); err != nil {
			return time.Time{}, false
		}
	}
	digits := 0
	if dot := strings.IndexByte(s, '.'); dot >= 0 {
		for j := dot + 1; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
			digits++
		}
	}
	switch digits {
	case 3:
		t = t.Add(time.Millisecond - 1)
	case 6:
		t = t.Add(time.Microsecond - 1)
	}
	if !storage.InstantInRange(t) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// Get serves GET /entity/{id}: the latest revision, the one live at at, or
// the one written by transaction tx.
func (s *Service) Get(ctx context.Context, tenant string, id [16]byte, at *time.Time, tx *[16]byte) (*storage.Entity, error) {
	var e *storage.Entity
	var err error
	switch {
	case at != nil && tx != nil:
		return nil, badRequest("cannot specify both pointInTime and transactionId")
	case at != nil:
		e, err = s.store.GetAt(ctx, tenant, id, *at)
	case tx != nil:
		e, err = s.store.GetByTx(ctx, tenant, id, *tx)
	default:
		e, err = s.latest(ctx, tenant, id)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, EntityNotFound(id)
	}
	return e, err
}

// List serves GET /entity/{name}/{version}: live entities in id order,
// pageSize per page.
func (s *Service) List(ctx context.Context, tenant string, key storage.ModelKey, pageSize, pageNumber int, at *time.Time) ([]*storage.Entity, error) {
	switch {
	case pageNumber < 0:
		return nil, pageErr("pageNumber", "invalid pageNumber")
	case pageSize < 0:
		return nil, pageErr("pageSize", "invalid pageSize")
	case pageSize > MaxPageSize:
		return nil, pageErr("pageSize", "pageSize must be at most 10000")
	case pageNumber > MaxPageNumber:
		return nil, pageErr("pageNumber", "pageNumber must be at most 214748")
	}
	if _, err := s.model(ctx, tenant, key); err != nil {
		return nil, err
	}
	return s.store.List(ctx, tenant, key, at, pageNumber*pageSize, pageSize)
}

func pageErr(param, msg string) error {
	return apierr.New(apierr.BadRequest, msg, apierr.P("parameter", param))
}

// Change is one entry of an entity's change history.
type Change struct {
	Type string // CREATE, UPDATE, DELETE
	At   time.Time
	User string
	TxID [16]byte
	// AttributedKind is User's kind; ExecID and ExecKind the executor.
	// Empty on revisions that did not record them (then omitted).
	AttributedKind, ExecID, ExecKind string
	// HasTx is false on DELETE tombstones, which carry no payload.
	HasTx bool
}

var wireChange = map[string]string{storage.ChangeCreated: "CREATE", storage.ChangeUpdated: "UPDATE", storage.ChangeDeleted: "DELETE"}

// Changes serves GET /entity/{id}/changes: newest first, at most 1000,
// truncated to entries at or before at.
func (s *Service) Changes(ctx context.Context, tenant string, id [16]byte, at *time.Time) ([]Change, error) {
	h, err := s.store.History(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, EntityNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	out := make([]Change, 0, min(len(h), MaxChanges))
	for i := len(h) - 1; i >= 0 && len(out) < MaxChanges; i-- {
		r := &h[i]
		if at != nil && r.UpdatedAt.After(*at) {
			continue
		}
		c := Change{Type: wireChange[r.ChangeType], At: r.UpdatedAt, User: r.User, TxID: r.TxID, HasTx: !r.Deleted}
		if a := r.Attribution; a != nil {
			c.AttributedKind, c.ExecID, c.ExecKind = a.UserKind, a.ExecID, a.ExecKind
		}
		out = append(out, c)
	}
	return out, nil
}

// Transitions serves GET /entity/{id}/transitions: the transitions declared
// on the entity's state at at (or at the commit of transaction tx, or now).
func (s *Service) Transitions(ctx context.Context, tenant string, id [16]byte, at *time.Time, tx *[16]byte) ([]string, error) {
	if at != nil && tx != nil {
		return nil, badRequest("pointInTime and transactionId are mutually exclusive")
	}
	notFound := apierr.New(apierr.EntityNotFound, "entity not found")
	if tx != nil {
		// A transaction's commit instant is known from the revision it wrote.
		h, err := s.store.History(ctx, tenant, id)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, notFound
		}
		if err != nil {
			return nil, err
		}
		found := false
		for i := range h {
			if h[i].TxID == *tx {
				t := h[i].UpdatedAt
				at, found = &t, true
				break
			}
		}
		if !found {
			return nil, badRequest("unknown transactionId")
		}
	}
	var e *storage.Entity
	var err error
	if at != nil {
		e, err = s.store.GetAt(ctx, tenant, id, *at)
	} else {
		e, err = s.store.Get(ctx, tenant, id)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	m, err := s.model(ctx, tenant, e.Model)
	if err != nil {
		return nil, err
	}
	return s.wf.Transitions(ctx, tenant, m, e.State)
}
