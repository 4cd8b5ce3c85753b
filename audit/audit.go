// Package audit serves an entity's audit trail (docs/decisions/0022-audit-and-messages.md):
// the EntityChange and StateMachine events the entity service writes in
// the transaction of each change, filtered and paged newest first, and the
// STATE_MACHINE_FINISH lookup by transaction. Reads are scoped by tenant:
// another tenant's entity has no trail (ENTITY_NOT_FOUND).
package audit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/storage"
)

// Paging limits of the list (docs/decisions/0022-audit-and-messages.md).
const (
	DefaultLimit = 20
	MaxLimit     = 1000
)

// Severity is the one severity svc records.
const Severity = "INFO"

// Query is a parsed list request.
type Query struct {
	// Kinds are the eventType values as sent; nil when absent (both
	// non-System kinds). Unknown values match nothing.
	Kinds []string
	// Severity as sent; "" when absent.
	Severity string
	From, To time.Time
	TxID     *[16]byte
	Offset   int
	Limit    int
}

// Page is one page of events, newest first. NextCursor is set when HasNext.
type Page struct {
	Events     []storage.AuditEvent
	HasNext    bool
	NextCursor string
}

// Service reads the audit trail.
type Service struct {
	audits   storage.Audits
	entities storage.Entities
}

// New returns a service over the audit store and the entity store it
// belongs to (to tell an entity without events from an unknown one).
func New(audits storage.Audits, entities storage.Entities) *Service {
	return &Service{audits: audits, entities: entities}
}

var defaultKinds = []string{storage.AuditEntityChange, storage.AuditStateMachine}

func notFound(id [16]byte, msg string) error {
	return apierr.New(apierr.EntityNotFound, msg, apierr.P("entityId", uuid.UUID(id).String()))
}

// exists reports ENTITY_NOT_FOUND unless the tenant's entity has a
// revision history; a deleted entity still has one.
func (s *Service) exists(ctx context.Context, tenant string, id [16]byte) error {
	_, err := s.entities.History(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return notFound(id, "entity not found")
	}
	if err != nil {
		return fmt.Errorf("audit: reading the entity's history: %w", err)
	}
	return nil
}

// List returns a page of an entity's events matching q.
func (s *Service) List(ctx context.Context, tenant string, id [16]byte, q Query) (*Page, error) {
	f := storage.AuditFilter{Kinds: q.Kinds, From: q.From, To: q.To, TxID: q.TxID}
	if f.Kinds == nil {
		f.Kinds = defaultKinds
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	page := &Page{Events: []storage.AuditEvent{}}
	if q.Severity != "" && q.Severity != Severity {
		// Every event is INFO: another severity matches none.
		return page, s.exists(ctx, tenant, id)
	}
	evs, more, err := s.audits.EntityAudit(ctx, tenant, id, f, q.Offset, limit)
	if err != nil {
		return nil, fmt.Errorf("audit: listing events: %w", err)
	}
	if len(evs) == 0 {
		// Events exist only for entities that do, so only an empty page
		// needs the existence check.
		if err := s.exists(ctx, tenant, id); err != nil {
			return nil, err
		}
	}
	page.Events, page.HasNext = evs, more
	if more {
		page.NextCursor = strconv.Itoa(q.Offset + len(evs))
	}
	return page, nil
}

// Finished returns the STATE_MACHINE_FINISH event of an entity's
// transaction.
func (s *Service) Finished(ctx context.Context, tenant string, id, txID [16]byte) (*storage.AuditEvent, error) {
	e, err := s.audits.FinishedEvent(ctx, tenant, id, txID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, notFound(id, "finished event not found")
	}
	if err != nil {
		return nil, fmt.Errorf("audit: reading the finished event: %w", err)
	}
	return e, nil
}

// ParseLimit reads the limit parameter: an integer ≥ 1, clamped to
// MaxLimit; absent gives DefaultLimit.
func ParseLimit(raw string, present bool) (int, error) {
	if !present {
		return DefaultLimit, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil || n < 1 {
		return 0, apierr.New(apierr.BadRequest, "invalid limit parameter", apierr.P("parameter", "limit"), apierr.P("invalidValue", raw))
	}
	return int(min(n, MaxLimit)), nil
}

// ParseCursor reads the opaque cursor, a decimal offset; anything else
// starts from the beginning (docs/decisions/0022-audit-and-messages.md).
func ParseCursor(raw string) int {
	n, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return int(n)
}

func badTime(param, raw string) error {
	return apierr.New(apierr.BadRequest, "invalid value for parameter '"+param+"': an RFC 3339 instant "+storage.InstantRangeText+" is expected",
		apierr.P("parameter", param), apierr.P("invalidValue", raw))
}

// ParseTime reads fromUtcTime/toUtcTime: an RFC 3339 date-time, a missing
// offset meaning UTC. Unlike pointInTime no rounding applies: the bounds
// are exact (from inclusive, to exclusive).
func ParseTime(param, raw string) (time.Time, error) {
	s := strings.TrimSpace(raw)
	// An unencoded '+' of an offset arrives as a space.
	if i := strings.LastIndexByte(s, ' '); i > 10 {
		s = s[:i] + "+" + s[i+1:]
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t, err = time.Parse("2006-01-02T15:04:05.999999999", s); err != nil {
			return time.Time{}, badTime(param, raw)
		}
	}
	if !storage.InstantInRange(t) {
		return time.Time{}, badTime(param, raw)
	}
	return t.UTC(), nil
}
