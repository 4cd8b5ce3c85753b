package entity

import (
	"context"

	"svc/platform/apierr"
	"svc/storage"
)

// Workflow decides the states entities move through. It runs inside the
// write it serves; the workflow package implements it with the full engine
// (imported workflows, criteria, processors). Processors may rewrite the
// document, so each hook returns the data to store.
type Workflow interface {
	// OnCreate settles a new entity: its state and its data.
	OnCreate(ctx context.Context, tenant string, m *storage.Model, data []byte) (state string, out []byte, err error)
	// OnUpdate runs the named transition, or the loopback when transition
	// is "", from state with the new data.
	OnUpdate(ctx context.Context, tenant string, m *storage.Model, state, transition string, data []byte) (next string, out []byte, err error)
	// Transitions lists the transitions declared on state, in order.
	Transitions(ctx context.Context, tenant string, m *storage.Model, state string) ([]string, error)
}

// Default workflow states (docs/decisions/0016-workflow-definitions.md).
const (
	StateCreated = "CREATED"
	StateDeleted = "DELETED"
)

// DefaultWorkflow is the embedded default lifecycle: NONE -NEW-> CREATED;
// CREATED -UPDATE-> CREATED, CREATED -DELETE-> DELETED (terminal). A
// loopback never changes the state.
type DefaultWorkflow struct{}

func (DefaultWorkflow) OnCreate(_ context.Context, _ string, _ *storage.Model, data []byte) (string, []byte, error) {
	return StateCreated, data, nil
}

func (DefaultWorkflow) OnUpdate(_ context.Context, _ string, _ *storage.Model, state, transition string, data []byte) (string, []byte, error) {
	if transition == "" {
		return state, data, nil
	}
	if state == StateCreated {
		switch transition {
		case "UPDATE":
			return StateCreated, data, nil
		case "DELETE":
			return StateDeleted, data, nil
		}
	}
	return "", nil, apierr.New(apierr.TransitionNotFound, "transition "+transition+" not found from state "+state,
		apierr.P("transition", transition), apierr.P("state", state))
}

func (DefaultWorkflow) Transitions(_ context.Context, _ string, _ *storage.Model, state string) ([]string, error) {
	if state == StateCreated {
		return []string{"UPDATE", "DELETE"}, nil
	}
	return []string{}, nil
}
