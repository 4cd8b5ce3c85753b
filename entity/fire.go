package entity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"svc/audit"
	"svc/storage"
	"svc/workflow"
)

// FireOutcome is how FireTask ended for a claimed task.
type FireOutcome int

const (
	// FireLeft: nothing done; the task stays (gone already, re-armed into
	// the future, or late within the grace).
	FireLeft FireOutcome = iota
	// FireDropped: the task no longer applies (entity gone or moved on,
	// transition removed) and was deleted without audit.
	FireDropped
	// FireExpired: later than timeoutMs plus the grace; deleted with
	// SCHEDULED_TRANSITION_EXPIRE, the criterion not evaluated.
	FireExpired
	// FireDeclined: the criterion was false; deleted, never retried.
	FireDeclined
	// FireFired: the transition ran and the entity was saved.
	FireFired
)

var fireOutcomeNames = [...]string{"left", "dropped", "expired", "declined", "fired"}

func (o FireOutcome) String() string { return fireOutcomeNames[o] }

// systemAuth is who scheduled fires run as: processors and criteria see
// kind system, id "system" (the write itself is the arming user's).
var systemAuth = workflow.Auth{Kind: "system", ID: "system"}

// FireTask fires a claimed scheduled task at now (docs/decisions/0018-scheduled-transitions.md,
// firing): the task is re-read, checked against the entity and its
// workflow and the lateness rule, then fired in one transaction that
// saves the entity with a CAS on the version read, deletes the task (only
// if it is still the one read), arms the new state's tasks and records the
// audit. An error means the transaction rolled back and the task stays for
// a retry once its claim passes.
func (s *Service) FireTask(ctx context.Context, claimed storage.ScheduledTask, now time.Time, grace time.Duration) (FireOutcome, error) {
	ew, ok := s.wf.(*EngineWorkflow)
	if !ok || s.tasks == nil {
		return FireLeft, errors.New("scheduled fire: no workflow engine or task store configured")
	}
	tenant := claimed.Tenant
	t, err := s.tasks.GetTask(ctx, tenant, claimed.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return FireLeft, nil
	}
	if err != nil {
		return FireLeft, fmt.Errorf("scheduled fire: reading task: %w", err)
	}
	if t.Tenant != tenant {
		return FireLeft, nil
	}
	drop := func() (FireOutcome, error) {
		if err := s.dropTask(ctx, t, nil); err != nil {
			return FireLeft, err
		}
		return FireDropped, nil
	}
	e, err := s.store.Get(ctx, tenant, t.EntityID)
	if errors.Is(err, storage.ErrNotFound) {
		return drop()
	}
	if err != nil {
		return FireLeft, fmt.Errorf("scheduled fire: reading entity: %w", err)
	}
	if e.State != t.SourceState {
		return drop()
	}
	if t.ScheduledTime.After(now) {
		return FireLeft, nil
	}
	m, err := s.models.GetModel(ctx, tenant, e.Model)
	if errors.Is(err, storage.ErrNotFound) {
		return drop()
	}
	if err != nil {
		return FireLeft, fmt.Errorf("scheduled fire: loading model: %w", err)
	}
	if !imported(m) {
		return drop()
	}
	set, err := ew.set(tenant, m)
	if err != nil {
		return FireLeft, err
	}
	if set.ScheduledTransition(t.SourceState, t.Transition) == nil {
		return drop()
	}
	eid := uuid.UUID(e.ID).String()
	switch workflow.CheckLateness(t.ScheduledTime, now, t.TimeoutMs, grace) {
	case workflow.WaitGrace:
		return FireLeft, nil
	case workflow.Expire:
		ev := workflow.ScheduledEvent(workflow.EventScheduledTransitionExpire, eid, e.State, "", t.Transition, t.SourceState, time.Time{}, now)
		if err := s.dropTask(ctx, t, []workflow.Event{ev}); err != nil {
			return FireLeft, err
		}
		return FireExpired, nil
	}

	txID, err := newTimeID()
	if err != nil {
		return FireLeft, err
	}
	// The fire's dispatches carry its transaction's token too.
	ctx, ow := s.ownTx(ctx, tenant, txID)
	defer ow.done()
	r := run(ctx, tenant, m, e.ID, txID, e.State, e.Data)
	r.Auth = systemAuth
	r.Entity.Meta.CreationDate, r.Entity.Meta.LastUpdateTime = e.CreatedAt, e.UpdatedAt
	r.Entity.Meta.TransitionForLatestSave = e.Transition
	out, res, err := ew.Engine.FireScheduled(ctx, set, r, t.SourceState, t.Transition)
	if err != nil {
		return FireLeft, err
	}
	switch res {
	case workflow.Gone:
		return drop()
	case workflow.Declined:
		if err := s.dropTask(ctx, t, out.Events); err != nil {
			return FireLeft, err
		}
		return FireDeclined, nil
	}
	st, err := engineSettled(out, r)
	if err != nil {
		return FireLeft, err
	}
	if err := ew.withArms(ctx, set, r, out, &st); err != nil {
		return FireLeft, err
	}
	tx := &storage.Tx{Tenant: tenant, ID: txID, User: t.User, Attribution: scheduledAttribution(t),
		Tasks: []storage.TaskOp{{Delete: true, Task: storage.ScheduledTask{ID: t.ID, EntityID: t.EntityID}, IfArmTx: t.ArmTx}}}
	ops, err := s.reconcile(ctx, tenant, e.ID, txID, &st, false, nil, t.ID)
	if err != nil {
		return FireLeft, err
	}
	tx.Tasks = append(tx.Tasks, ops...)
	tx.Writes = []storage.Write{{ID: e.ID, Model: e.Model, State: st.State, Data: st.Data, Transition: t.Transition, ExpectVersion: e.Version}}
	if err := s.keyWrite(m, &tx.Writes[0]); err != nil {
		return FireLeft, fmt.Errorf("scheduled fire: %w", err)
	}
	if _, err := s.commitOwned(ctx, withAudit(tx, [][]storage.AuditEvent{st.Events})); err != nil {
		return FireLeft, fmt.Errorf("scheduled fire: saving entity: %w", err)
	}
	return FireFired, nil
}

// dropTask deletes t, provided it is still the task read (a concurrent
// re-arm wins), recording evs with the delete. The delete is attributed
// to the task's arming principal like the fire would be.
func (s *Service) dropTask(ctx context.Context, t *storage.ScheduledTask, evs []workflow.Event) error {
	txID, err := newTimeID()
	if err != nil {
		return err
	}
	tx := &storage.Tx{Tenant: t.Tenant, ID: txID, User: t.User,
		Tasks: []storage.TaskOp{{Delete: true, Task: storage.ScheduledTask{ID: t.ID, EntityID: t.EntityID}, IfArmTx: t.ArmTx}}}
	if len(evs) > 0 {
		tid := uuid.UUID(txID).String()
		for i := range evs {
			evs[i].TransactionID = tid
		}
		if tx.Audit, err = audit.FromWorkflow(evs); err != nil {
			return err
		}
	}
	if _, err := s.store.Commit(ctx, tx); err != nil {
		return fmt.Errorf("scheduled fire: deleting task: %w", err)
	}
	return nil
}
