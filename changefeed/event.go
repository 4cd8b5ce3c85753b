package changefeed

import (
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/storage"
)

// What a subscription asks for of each event's bodies.
const (
	BodyNone          = "NONE"
	BodyAfter         = "AFTER"
	BodyBeforeAndAter = "BEFORE_AND_AFTER"
)

// bodyLevel orders includeBody values: what the recorder must store is
// the most any subscription of the model asks for.
func bodyLevel(s string) int {
	switch s {
	case BodyAfter:
		return 1
	case BodyBeforeAndAter:
		return 2
	}
	return 0
}

// Event is a change event as clients see it, in the API's JSON casing.
type Event struct {
	EventID        string          `json:"eventId"`
	TenantID       string          `json:"tenantId"`
	TransactionID  string          `json:"transactionId"`
	Cursor         string          `json:"cursor"`
	EmittedAt      time.Time       `json:"emittedAt"`
	ModelName      string          `json:"modelName"`
	ModelVersion   int             `json:"modelVersion"`
	EntityID       string          `json:"entityId"`
	Kind           string          `json:"kind"`
	FromState      string          `json:"fromState,omitempty"`
	ToState        string          `json:"toState,omitempty"`
	TransitionName string          `json:"transitionName,omitempty"`
	BodyBefore     json.RawMessage `json:"bodyBefore,omitempty"`
	BodyAfter      json.RawMessage `json:"bodyAfter,omitempty"`
}

// EventOf is e as a subscriber with includeBody sees it. eventId is
// <transactionId>:<entityId>: a replay after a crash has the same id, so
// consumers dedupe by it (it is no order; the cursor is).
func EventOf(e *storage.ChangeEvent, includeBody string) Event {
	tx, ent := uuid.UUID(e.TxID).String(), uuid.UUID(e.EntityID).String()
	ev := Event{EventID: tx + ":" + ent, TenantID: e.Tenant, TransactionID: tx, Cursor: e.Cursor.String(), EmittedAt: e.EmittedAt,
		ModelName: e.Model.Name, ModelVersion: e.Model.Version, EntityID: ent, Kind: e.Kind, FromState: e.FromState,
		ToState: e.ToState, TransitionName: e.Transition}
	lvl := bodyLevel(includeBody)
	if lvl >= 1 && len(e.BodyAfter) > 0 {
		ev.BodyAfter = json.RawMessage(e.BodyAfter)
	}
	if lvl >= 2 && len(e.BodyBefore) > 0 {
		ev.BodyBefore = json.RawMessage(e.BodyBefore)
	}
	return ev
}
