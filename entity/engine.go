package entity

import (
	"bytes"
	"context"

	"github.com/google/uuid"

	"svc/audit"
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
// identifiedWorkflow, and hands back the engine's state-machine events,
// which the write records in its own transaction (withAudit), and the
// fire times of the settled state's scheduled transitions (withArms).
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
	r.Segmenter = segmentFrom(ctx)
	if g, _ := ctx.Value(segmentKey{}).(*segment); g != nil {
		g.run = r
	}
	// Members may call back into this transaction with its token (docs/decisions/0015-transactions.md).
	if o := runTx(ctx); o != nil {
		r.MintTxToken = o.Token
		r.Savepoints = o
		if id != ([16]byte{}) {
			r.Publish = publisher(o, id, m.Key, state == "", r.Auth.ID)
		}
	}
	return r
}

// identifiedWorkflow is a Workflow that also wants the entity's id and the
// writing transaction's id (zero when not known yet), for criteria on them
// and for compute-member requests, and that reports the state-machine
// events of its run (nil when it took the no-workflow path). The service
// prefers it when the configured Workflow implements it.
type identifiedWorkflow interface {
	OnCreateEntity(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, data []byte) (settled, error)
	OnUpdateEntity(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, state, transition string, data []byte) (settled, error)
}

// settled is the result of a workflow run: the state and data to write
// and, when an engine ran, its events for the audit trail.
type settled struct {
	State  string
	Data   []byte
	Events []storage.AuditEvent
	// arms are the scheduled transitions to arm (schedule.go).
	arms *armPlan
}

func (s *Service) onCreate(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, data []byte) (settled, error) {
	if w, ok := s.wf.(identifiedWorkflow); ok {
		return w.OnCreateEntity(ctx, tenant, m, id, txID, data)
	}
	state, out, err := s.wf.OnCreate(ctx, tenant, m, data)
	return settled{State: state, Data: out}, err
}

func (s *Service) onUpdate(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, state, transition string, data []byte) (settled, error) {
	if w, ok := s.wf.(identifiedWorkflow); ok {
		return w.OnUpdateEntity(ctx, tenant, m, id, txID, state, transition, data)
	}
	st, out, err := s.wf.OnUpdate(ctx, tenant, m, state, transition, data)
	return settled{State: st, Data: out}, err
}

// engineSettled is the outcome of an engine run as a settled write. An id
// unknown to the run (zero) leaves its events out: they could not name
// the entity.
func engineSettled(out *workflow.Outcome, r *workflow.Run) (settled, error) {
	st := settled{State: out.State, Data: r.Entity.Data}
	if r.Entity.Meta.ID == "" {
		return st, nil
	}
	evs, err := audit.FromWorkflow(out.Events)
	if err != nil {
		return settled{}, err
	}
	if evs == nil {
		evs = []storage.AuditEvent{}
	}
	st.Events = evs
	return st, nil
}

// OnCreate implements Workflow (no id known).
func (w *EngineWorkflow) OnCreate(ctx context.Context, tenant string, m *storage.Model, data []byte) (string, []byte, error) {
	st, err := w.OnCreateEntity(ctx, tenant, m, [16]byte{}, [16]byte{}, data)
	return st.State, st.Data, err
}

// OnCreateEntity implements identifiedWorkflow.
func (w *EngineWorkflow) OnCreateEntity(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, data []byte) (settled, error) {
	if !imported(m) {
		state, out, err := DefaultWorkflow{}.OnCreate(ctx, tenant, m, data)
		return settled{State: state, Data: out}, err
	}
	set, err := w.set(tenant, m)
	if err != nil {
		return settled{}, err
	}
	r := run(ctx, tenant, m, id, txID, "", data)
	out, err := w.Engine.Create(ctx, set, r)
	if err != nil {
		return settled{}, err
	}
	st, err := engineSettled(out, r)
	if err != nil {
		return settled{}, err
	}
	return st, w.withArms(ctx, set, r, out, &st)
}

// OnUpdate implements Workflow (no id known).
func (w *EngineWorkflow) OnUpdate(ctx context.Context, tenant string, m *storage.Model, state, transition string, data []byte) (string, []byte, error) {
	st, err := w.OnUpdateEntity(ctx, tenant, m, [16]byte{}, [16]byte{}, state, transition, data)
	return st.State, st.Data, err
}

// OnUpdateEntity implements identifiedWorkflow: the loopback when
// transition is "", else the named transition, then the cascade.
func (w *EngineWorkflow) OnUpdateEntity(ctx context.Context, tenant string, m *storage.Model, id, txID [16]byte, state, transition string, data []byte) (settled, error) {
	if !imported(m) {
		st, out, err := DefaultWorkflow{}.OnUpdate(ctx, tenant, m, state, transition, data)
		return settled{State: st, Data: out}, err
	}
	set, err := w.set(tenant, m)
	if err != nil {
		return settled{}, err
	}
	r := run(ctx, tenant, m, id, txID, state, data)
	var out *workflow.Outcome
	if transition == "" {
		out, err = w.Engine.Loopback(ctx, set, r)
	} else {
		out, err = w.Engine.Transition(ctx, set, r, transition)
	}
	if err != nil {
		return settled{}, err
	}
	st, err := engineSettled(out, r)
	if err != nil {
		return settled{}, err
	}
	return st, w.withArms(ctx, set, r, out, &st)
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
