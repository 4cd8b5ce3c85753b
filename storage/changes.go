package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The change feed's storage (docs/decisions/0032-change-events.md). An
// event is written by Commit in the same transaction as the entity change
// it describes (Tx.Changes), so an acknowledged write always has its
// event and a rolled-back one never does.

// Kinds of a change event: from body presence alone (a workflow "soft
// delete" is an UPDATE seen through ToState).
const (
	KindCreate = "CREATE"
	KindUpdate = "UPDATE"
	KindDelete = "DELETE"
)

// ChangeCursor is a position in the change log, monotone in commit order.
// PostgreSQL uses Hi for the writing transaction's id (xid8) and Lo for a
// sequence within; SQLite uses Hi 1 and the rowid of the revision the
// event rides (Hi 0 were its former outbox's sequences); memory leaves Hi
// 0. The zero cursor is before every event.
type ChangeCursor struct{ Hi, Lo int64 }

// Less orders cursors.
func (c ChangeCursor) Less(d ChangeCursor) bool {
	return c.Hi < d.Hi || (c.Hi == d.Hi && c.Lo < d.Lo)
}

// String is the cursor as clients see it (opaque to them): "hi-lo".
func (c ChangeCursor) String() string {
	return strconv.FormatInt(c.Hi, 10) + "-" + strconv.FormatInt(c.Lo, 10)
}

// ParseChangeCursor reads String's form.
func ParseChangeCursor(s string) (ChangeCursor, error) {
	hi, lo, ok := strings.Cut(s, "-")
	if !ok {
		return ChangeCursor{}, fmt.Errorf("cursor %q: want hi-lo", s)
	}
	h, err1 := strconv.ParseInt(hi, 10, 64)
	l, err2 := strconv.ParseInt(lo, 10, 64)
	if err1 != nil || err2 != nil || h < 0 || l < 0 {
		return ChangeCursor{}, fmt.Errorf("cursor %q: want two non-negative integers", s)
	}
	return ChangeCursor{h, l}, nil
}

// Change is one event a transaction records: one per (commit, entity).
// The change feed puts it in Tx.Changes; the engine fills FromState (and
// BodyBefore when WantBefore) from the row it read inside the transaction,
// and stamps the commit instant.
type Change struct {
	EntityID   [16]byte
	Model      ModelKey
	Kind       string
	FromState  string
	ToState    string
	Transition string
	// BodyAfter is the document written (nil on DELETE or when nobody
	// asked for bodies); BodyBefore the one it replaced.
	BodyAfter  []byte
	BodyBefore []byte
	WantBefore bool
}

// ModelDeleteChanges asks DeleteModel for its change events: one DELETE
// per entity removed, from and to the state it had, no transition.
type ModelDeleteChanges struct {
	// WantBefore keeps each entity's last body as BodyBefore.
	WantBefore bool
}

// ChangeEvent is a stored change.
type ChangeEvent struct {
	Cursor    ChangeCursor
	Tenant    string
	TxID      [16]byte
	EmittedAt time.Time
	Change
}

// ChangeQuery selects events after a cursor. Zero Tenant reads every
// tenant (a node's live tail); a nil Model every model.
type ChangeQuery struct {
	Tenant string
	Model  *ModelKey
	After  ChangeCursor
	Limit  int
}

// ChangeLog reads the events Commit wrote.
type ChangeLog interface {
	// ReadChanges returns at most q.Limit events after q.After in cursor
	// order. An event is returned only once no event with a smaller
	// cursor can still appear (PostgreSQL holds back events behind a
	// transaction still open), so a reader that keeps the last cursor it
	// saw never misses one.
	ReadChanges(ctx context.Context, q ChangeQuery) ([]ChangeEvent, error)
	// ChangeHead is the cursor of the newest readable event (zero when
	// none): a live reader starts after it.
	ChangeHead(ctx context.Context) (ChangeCursor, error)
	// ChangeCursorAt is the cursor just before the first event of tenant
	// and model emitted at or after t.
	ChangeCursorAt(ctx context.Context, tenant string, model ModelKey, t time.Time) (ChangeCursor, error)
	// ChangeLag counts tenant's events of model after cursor and gives
	// the emission time of the oldest (zero when none).
	ChangeLag(ctx context.Context, tenant string, model ModelKey, after ChangeCursor) (int64, time.Time, error)
	// PruneChanges removes events emitted before t and, when keep > 0,
	// all but the newest keep events of each tenant and model; it returns
	// how many it removed.
	PruneChanges(ctx context.Context, before time.Time, keep int64) (int64, error)
}

// Subscription is a stored change-feed subscription. Spec is the
// definition as the change feed encodes it (filter, delivery, body
// options); storage only keys it.
type Subscription struct {
	Tenant string
	ID     string
	Model  ModelKey
	// IncludeBody is NONE, AFTER or BEFORE_AND_AFTER (the watched set
	// reads it without decoding Spec).
	IncludeBody string
	Spec        []byte
	Cursor      ChangeCursor
	CreatedAt   time.Time
	// AttachedAt is when a consumer last attached or acknowledged.
	AttachedAt time.Time
}

// Subscriptions stores subscriptions, scoped by tenant.
type Subscriptions interface {
	// CreateSubscription stores s; ErrExists when the id is taken.
	CreateSubscription(ctx context.Context, s *Subscription) error
	// GetSubscription returns one; ErrNotFound when absent.
	GetSubscription(ctx context.Context, tenant, id string) (*Subscription, error)
	// ListSubscriptions returns tenant's subscriptions by id after
	// afterID, at most limit.
	ListSubscriptions(ctx context.Context, tenant, afterID string, limit int) ([]Subscription, error)
	// AllSubscriptions returns every tenant's subscriptions (the watched
	// set's full sync and the TTL sweep).
	AllSubscriptions(ctx context.Context) ([]Subscription, error)
	// UpdateSubscription replaces IncludeBody and Spec; ErrNotFound.
	UpdateSubscription(ctx context.Context, s *Subscription) error
	// DeleteSubscription removes one; ErrNotFound when absent.
	DeleteSubscription(ctx context.Context, tenant, id string) error
	// AckSubscription moves the cursor forward to c (never back) and
	// stamps AttachedAt; ErrNotFound when absent.
	AckSubscription(ctx context.Context, tenant, id string, c ChangeCursor, at time.Time) error
}
