package workflow

import (
	"context"
	"errors"
	"time"

	json "github.com/goccy/go-json"
)

// Criteria targets on the wire.
const (
	TargetWorkflow   = "WORKFLOW"
	TargetTransition = "TRANSITION"
)

var errNoEvaluator = errors.New("no condition evaluator is configured")

// evalCriterion evaluates a workflow criterion (t nil) or a transition
// criterion. A top-level function criterion goes to a compute member and
// may bring a reason; other conditions go to the CriteriaEvaluator, which
// calls back for nested function conditions.
func (x *exec) evalCriterion(ctx context.Context, wf *compiled, t *ctransition, c *criterion) (bool, string, error) {
	if c.fn != nil {
		return x.callFunction(ctx, wf, t, c.fn)
	}
	if x.e.Criteria == nil {
		return false, "", errNoEvaluator
	}
	fn := func(ctx context.Context, cond json.RawMessage) (bool, error) {
		inner, err := compileCriterion(cond)
		if err != nil {
			return false, err
		}
		if inner == nil || inner.fn == nil {
			return false, errors.New("not a function condition")
		}
		ok, _, err := x.callFunction(ctx, wf, t, inner.fn)
		return ok, err
	}
	ok, err := x.e.Criteria.Eval(ctx, c.raw, x.run.Entity.Data, x.run.Entity.Meta, fn)
	return ok, "", err
}

func (x *exec) callFunction(ctx context.Context, wf *compiled, t *ctransition, f *functionSpec) (bool, string, error) {
	if f.name == "" {
		return false, "", errors.New("function condition without function.name")
	}
	if x.e.Dispatcher == nil {
		return false, "", NoMemberForTag(f.tagsCSV)
	}
	call := &CriteriaCall{Call: x.call(wf, t, f.tags, f.tagsCSV, f.attach, f.timeout, f.context), Criteria: f.name, Target: TargetWorkflow}
	if t != nil {
		call.Target = TargetTransition
	}
	res, err := x.e.Dispatcher.DispatchCriteria(ctx, call)
	if err != nil {
		return false, "", err
	}
	x.out.Warnings = append(x.out.Warnings, res.Warnings...)
	if !res.Success {
		msg := "criteria returned failure"
		if res.Error != nil && res.Error.Message != "" {
			msg = res.Error.Message
		}
		return false, "", errors.New("criteria " + f.name + " failed: " + msg)
	}
	return res.Matches, capReason(res.Reason), nil
}

// call builds the common dispatch context for the entity as it is now.
func (x *exec) call(wf *compiled, t *ctransition, tags []string, tagsCSV string, attach bool, timeout time.Duration, params string) Call {
	c := Call{
		Tenant: x.run.Tenant, Auth: x.run.Auth, TxToken: x.run.txToken(),
		TransactionID: x.run.TransactionID, Meta: x.run.Entity.Meta,
		Workflow: wf.w.Name, StateFrom: x.run.Entity.Meta.State,
		Tags: tags, TagsCSV: tagsCSV, Parameters: params, Timeout: timeout,
	}
	if t != nil {
		c.Transition = t.t.Name
		c.StateTo = t.t.Next
	}
	if attach {
		c.Data = x.run.Entity.Data
	}
	return c
}
