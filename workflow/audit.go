package workflow

import (
	"strconv"
	"time"

	json "github.com/goccy/go-json"
)

// State-machine audit event types (docs/decisions/0017-workflow-engine.md).
const (
	EventStateMachineStart          = "STATE_MACHINE_START"
	EventStateMachineFinish         = "STATE_MACHINE_FINISH"
	EventCancel                     = "CANCEL"
	EventForceSuccess               = "FORCE_SUCCESS"
	EventWorkflowFound              = "WORKFLOW_FOUND"
	EventWorkflowNotFound           = "WORKFLOW_NOT_FOUND"
	EventWorkflowSkip               = "WORKFLOW_SKIP"
	EventTransitionMake             = "TRANSITION_MAKE"
	EventTransitionNotFound         = "TRANSITION_NOT_FOUND"
	EventTransitionNotMatchCriteria = "TRANSITION_NOT_MATCH_CRITERION"
	EventTransitionAborted          = "TRANSITION_ABORTED"
	EventPauseForProcessing         = "PAUSE_FOR_PROCESSING"
	EventStateProcessResult         = "STATE_PROCESS_RESULT"
	EventScheduledTransitionArm     = "SCHEDULED_TRANSITION_ARM"
	EventScheduledTransitionFire    = "SCHEDULED_TRANSITION_FIRE"
	EventScheduledTransitionExpire  = "SCHEDULED_TRANSITION_EXPIRE"
	EventScheduledTransitionCancel  = "SCHEDULED_TRANSITION_CANCEL"
)

// Event is one state-machine audit event. The caller assigns the time UUID
// and writes it in the transaction of the change it records.
type Event struct {
	Type          string
	EntityID      string
	State         string // the entity's state when the event happened
	TransactionID string // the request's entry transaction
	Details       string
	Data          json.RawMessage // a JSON object, or nil
	Time          time.Time
}

// objBuilder appends a flat JSON object without reflection; audit data is
// built on every engine step.
type objBuilder struct{ b []byte }

func (o *objBuilder) key(k string) {
	if len(o.b) == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.b = strconv.AppendQuote(o.b, k)
	o.b = append(o.b, ':')
}

func (o *objBuilder) str(k, v string) *objBuilder {
	o.key(k)
	o.b = appendJSONString(o.b, v)
	return o
}

func (o *objBuilder) boolean(k string, v bool) *objBuilder {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
	return o
}

func (o *objBuilder) done() json.RawMessage {
	if len(o.b) == 0 {
		return json.RawMessage("{}")
	}
	return append(o.b, '}')
}

// appendJSONString appends s as a JSON string. strconv.AppendQuote is not
// JSON (it writes \x escapes), so control and non-ASCII escapes go through
// the JSON encoder; the common plain case stays allocation-free.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			enc, _ := json.Marshal(s)
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// TransitionAborted is the event recorded when an update is refused for a
// stale If-Match after the engine's entry events (docs/decisions/0015-transactions.md). transition
// is the requested name, or "" for a loopback.
func TransitionAborted(entityID, state, transactionID, transition, expectedTxID, actualTxID string, at time.Time) Event {
	if transition == "" {
		transition = "loopback"
	}
	return Event{Type: EventTransitionAborted, EntityID: entityID, State: state, TransactionID: transactionID,
		Details: "Transition \"" + transition + "\" aborted: entity has been modified since last read",
		Data: (&objBuilder{}).str("reason", "ENTITY_MODIFIED").str("transitionName", transition).
			str("expectedTxId", expectedTxID).str("actualTxId", actualTxID).done(),
		Time: at}
}
