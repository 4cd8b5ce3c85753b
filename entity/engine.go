package entity

import (
	"bytes"
	"context"

	"github.com/google/uuid"

	"svc/iam"
	"svc/storage"
	"svc/workflow"
)

// EngineWorkflow is the Workflow of imported workflows: the workflow
// engine (selection by criterion, automated cascades bounded by
// SVC_MAX_STATE_VISITS, named transitions, criteria, processors on compute
// members) over the model's stored workflow set, compiled once per model
// revision. A model without imported workflows takes DefaultWorkflow's
// path, which behaves the same without the engine's cost.
//
// It also takes the entity's id and the writing transaction's id, see
// identifiedWorkflow. What the seam does not carry yet: the engine's audit
// events (no audit store in storage.Tx) and scheduled transitions (no
// scheduler).
type EngineWorkflow struct {
	Engine *workflow.Engine
	Sets   *workflow.SetCache
}

// NewEngineWorkflow runs e over a fresh compiled-set cache.
func NewEngineWorkflow(e *workflow.Engine) *EngineWorkflow {
	return &EngineWorkflow{Engine: e, Sets: workflow.NewSetCache(0)}
}

func imported(m *storage.Model) bool { return len(bytes.TrimSpace(m.Workflows)) != 0 }

func (w *EngineWorkflow) set(tenant string, m *storage.Model) (*workflow.Set, error) {
	return w.Sets.GetCreated(tenant, m.Key.Name, m.Key.Version, m.CreatedAt.UnixNano(), m.Revision, m.Workflows)
}

// run is the engine's view of the entity. The principal of the request
// (kept on the context by the HTTP layer) is who processors act for.
func run(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, state string, data []byte) *workflow.Run {
	r := &workflow.Run{Tenant: tenant, Entity: &workflow.Entity{
		Meta: workflow.Meta{ModelName: m.Key.Name, ModelVersion: m.Key.Version, State: state}, Data: data}}
	if id != ([16]byte{}) {
		r.Entity.Meta.ID = uuid.UUID(id).String()
	}
	if txID != ([16]byte{}) {
		r.TransactionID = uuid.UUID(txID).String()
		r.Entity.Meta.TransactionID = r.TransactionID
	}
	if p := iam.PrincipalFrom(ctx); p != nil {
		r.Auth = workflow.Auth{Kind: p.Kind, ID: p.UserID, Roles: p.Roles}
	}
	return r
}

// identifiedWorkflow is a Workflow that also wants the entity's id and the
// writing transaction's id (zero when not known yet), for criteria on them
// and for compute-member requests. The service prefers it when the
// configured Workflow implements it.
type identifiedWorkflow interface {
	OnCreateEntity(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, data []byte) (string, []byte, error)
	OnUpdateEntity(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, state, transition string, data []byte) (string, []byte, error)
}

func (s *Service) onCreate(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, data []byte) (string, []byte, error) {
	if w, ok := s.wf.(identifiedWorkflow); ok {
		return w.OnCreateEntity(ctx, tenant, m, id, txID, data)
	}
	return s.wf.OnCreate(ctx, tenant, m, data)
}

func (s *Service) onUpdate(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, state, transition string, data []byte) (string, []byte, error) {
	if w, ok := s.wf.(identifiedWorkflow); ok {
		return w.OnUpdateEntity(ctx, tenant, m, id, txID, state, transition, data)
	}
	return s.wf.OnUpdate(ctx, tenant, m, state, transition, data)
}

// OnCreate implements Workflow (no id known).
func (w *EngineWorkflow) OnCreate(ctx context.Context, tenant string, m *storage.Model, data []byte) (string, []byte, error) {
	return w.OnCreateEntity(ctx, tenant, m, [16]byte{}, [16]byte{}, data)
}

// OnCreateEntity implements identifiedWorkflow.
func (w *EngineWorkflow) OnCreateEntity(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, data []byte) (string, []byte, error) {
	if !imported(m) {
		return DefaultWorkflow{}.OnCreate(ctx, tenant, m, data)
	}
	set, err := w.set(tenant, m)
	if err != nil {
		return "", nil, err
	}
	r := run(ctx, tenant, m, id, txID, "", data)
	out, err := w.Engine.Create(ctx, set, r)
	if err != nil {
		return "", nil, err
	}
	return out.State, r.Entity.Data, nil
}

// OnUpdate implements Workflow (no id known).
func (w *EngineWorkflow) OnUpdate(ctx context.Context, tenant string, m *storage.Model, state, transition string, data []byte) (string, []byte, error) {
	return w.OnUpdateEntity(ctx, tenant, m, [16]byte{}, [16]byte{}, state, transition, data)
}

// OnUpdateEntity implements identifiedWorkflow: the loopback when
// transition is "", else the named transition, then the cascade.
func (w *EngineWorkflow) OnUpdateEntity(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, state, transition string, data []byte) (string, []byte, error) {
	if !imported(m) {
		return DefaultWorkflow{}.OnUpdate(ctx, tenant, m, state, transition, data)
	}
	set, err := w.set(tenant, m)
	if err != nil {
		return "", nil, err
	}
	r := run(ctx, tenant, m, id, txID, state, data)
	var out *workflow.Outcome
	if transition == "" {
		out, err = w.Engine.Loopback(ctx, set, r)
	} else {
		out, err = w.Engine.Transition(ctx, set, r, transition)
	}
	if err != nil {
		return "", nil, err
	}
	return out.State, r.Entity.Data, nil
}

// Transitions implements Workflow: the fireable transitions of state in
// the first active workflow that declares it.
func (w *EngineWorkflow) Transitions(ctx context.Context, tenant string, m *storage.Model, state string) ([]string, error) {
	if !imported(m) {
		return DefaultWorkflow{}.Transitions(ctx, tenant, m, state)
	}
	set, err := w.set(tenant, m)
	if err != nil {
		return nil, err
	}
	if ts := set.Transitions(state); ts != nil {
		return ts, nil
	}
	return []string{}, nil
}
