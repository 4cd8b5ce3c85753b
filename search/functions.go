package search

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"svc/iam"
	"svc/platform/apierr"
	"svc/predicate"
	"svc/storage"
	"svc/workflow"
)

// apierr.FunctionConditionFailed is the error of a function condition whose
// compute member answered success:false (or could not be sent the
// request): the condition cannot be decided for that entity, so the whole
// request fails.

// systemAuth acts for a job this node took over from another one: the
// submitter's principal is not stored with the job.
var systemAuth = workflow.Auth{Kind: "system", ID: "svc"}

type dispatcherRef struct{ d workflow.CriteriaDispatcher }

// SetDispatcher sets what answers function conditions (the compute
// server). Until it is set they answer 503 NO_COMPUTE_MEMBER_FOR_TAG, as a
// workflow criterion does with no member. Safe to call while serving.
func (s *Service) SetDispatcher(d workflow.CriteriaDispatcher) {
	s.dispatch.Store(&dispatcherRef{d})
}

func (s *Service) dispatcher() workflow.CriteriaDispatcher {
	if r := s.dispatch.Load(); r != nil {
		return r.d
	}
	return nil
}

// authOf is the principal of the request, forwarded to members as the
// dispatch's authtype, authid and authclaims.
func authOf(ctx context.Context) workflow.Auth {
	if p := iam.PrincipalFrom(ctx); p != nil {
		return workflow.Auth{Kind: p.Kind, ID: p.UserID, Roles: p.Roles}
	}
	return workflow.Auth{}
}

// functionSpecs reads the dispatch settings of every function condition of
// cond once per request; a malformed one is 400 INVALID_CONDITION.
func functionSpecs(cond *predicate.Condition) (map[*predicate.Function]*workflow.FunctionCondition, error) {
	specs := make(map[*predicate.Function]*workflow.FunctionCondition, len(cond.Functions()))
	for _, f := range cond.Functions() {
		fc, err := workflow.ParseFunctionCondition(f.Raw)
		if err != nil {
			return nil, apierr.New(apierr.InvalidCondition, err.Error(), apierr.P("function", f.Name))
		}
		specs[f] = fc
	}
	return specs, nil
}

// inFlight bounds the member round trips one request has outstanding.
// Candidates are decided concurrently (each entity's condition still left
// to right with short-circuiting), which hides the round-trip latency
// without letting one search flood the tenant's members.
const inFlight = 16

// functions evaluates a condition with function criteria against the
// entities of one request: each function criterion the evaluation reaches
// becomes an EntityCriteriaCalculationRequest for the entity under
// evaluation, sent to a member of the tenant serving the condition's tags,
// and its matches is the leaf's value.
type functions struct {
	ctx    context.Context
	tenant string
	model  storage.ModelKey
	auth   workflow.Auth
	d      workflow.CriteriaDispatcher
	cond   *predicate.Condition
	specs  map[*predicate.Function]*workflow.FunctionCondition
}

func (s *Service) functions(ctx context.Context, tenant string, key storage.ModelKey, cond *predicate.Condition, auth workflow.Auth) (*functions, error) {
	specs, err := functionSpecs(cond)
	if err != nil {
		return nil, err
	}
	return &functions{ctx: ctx, tenant: tenant, model: key, auth: auth, d: s.dispatcher(), cond: cond, specs: specs}, nil
}

// evaluator decides one entity at a time for one goroutine; its calls run
// on ctx.
type evaluator struct {
	*functions
	ctx  context.Context
	e    *storage.Entity // under evaluation
	meta predicate.Meta
}

// match is the full condition's verdict on e.
func (v *evaluator) match(e *storage.Entity) (bool, error) {
	v.e = e
	v.meta = predicate.Meta{ID: uuid.UUID(e.ID).String(), State: e.State, TransitionForLatestSave: e.Transition,
		TransactionID: uuid.UUID(e.TxID).String(), CreationDate: e.CreatedAt, LastUpdateTime: e.UpdatedAt}
	return v.cond.Eval(e.Data, &v.meta, v)
}

// filter keeps the entities the full condition selects, in their order.
// With max > 0 it stops early once more than max have matched (the caller
// only needs to know there are more). Candidates are decided by up to
// inFlight goroutines, all ended before filter returns; the first member
// failure cancels the rest and is the result.
func (f *functions) filter(es []*storage.Entity, max int) ([]*storage.Entity, error) {
	workers := min(inFlight, len(es))
	if workers <= 1 {
		v := &evaluator{functions: f, ctx: f.ctx}
		out := es[:0]
		for _, e := range es {
			ok, err := v.match(e)
			if err != nil {
				return nil, err
			}
			if ok {
				if out = append(out, e); max > 0 && len(out) > max {
					break
				}
			}
		}
		return out, nil
	}
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	verdict := make([]bool, len(es))
	var (
		next, matched atomic.Int64
		mu            sync.Mutex
		failure       error
		wg            sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				// Not the caller's goroutine: its recover cannot see this.
				if r := recover(); r != nil {
					mu.Lock()
					if failure == nil {
						failure = fmt.Errorf("search: function condition evaluation panicked: %v", r)
					}
					mu.Unlock()
					cancel()
				}
			}()
			v := &evaluator{functions: f, ctx: ctx}
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(es) {
					return
				}
				ok, err := v.match(es[i])
				if err != nil {
					mu.Lock()
					// An error after the cancel is the cancel's echo.
					if failure == nil && ctx.Err() == nil {
						failure = err
					}
					mu.Unlock()
					cancel()
					return
				}
				verdict[i] = ok
				if ok && max > 0 && matched.Add(1) > int64(max) {
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	if failure != nil {
		return nil, failure
	}
	if err := f.ctx.Err(); err != nil {
		return nil, err
	}
	out := es[:0]
	for i, e := range es {
		if verdict[i] {
			if out = append(out, e); max > 0 && len(out) > max {
				break
			}
		}
	}
	return out, nil
}

// CallFunction implements predicate.FunctionCaller for the entity under
// evaluation.
func (v *evaluator) CallFunction(fn *predicate.Function) (bool, error) {
	f := v.functions
	spec := f.specs[fn]
	if spec == nil {
		// Every function of the condition was read in functionSpecs.
		return false, errors.New("search: function condition " + fn.Name + " was not prepared")
	}
	e := v.e
	call := spec.Call(f.tenant, f.auth, workflow.Meta{
		ID: v.meta.ID, ModelName: f.model.Name, ModelVersion: f.model.Version, State: e.State,
		CreationDate: e.CreatedAt, LastUpdateTime: e.UpdatedAt, TransactionID: v.meta.TransactionID,
		TransitionForLatestSave: e.Transition,
	}, e.Data)
	if f.d == nil {
		return false, workflow.NoMemberForTag(call.TagsCSV)
	}
	res, err := f.d.DispatchCriteria(v.ctx, call)
	if err != nil {
		if _, ok := apierr.As(err); ok || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return false, err
		}
		return false, &apierr.Error{Code: apierr.FunctionConditionFailed, Cause: err,
			Message: "function condition " + fn.Name + " on entity " + v.meta.ID + ": " + err.Error(),
			Props:   []apierr.Prop{apierr.P("function", fn.Name), apierr.P("entityId", v.meta.ID)}}
	}
	if !res.Success {
		msg := "member returned failure"
		if res.Error != nil && res.Error.Message != "" {
			msg = res.Error.Message
		}
		return false, apierr.New(apierr.FunctionConditionFailed, "function condition "+fn.Name+" on entity "+v.meta.ID+" failed: "+msg,
			apierr.P("function", fn.Name), apierr.P("entityId", v.meta.ID))
	}
	return res.Matches, nil
}

// EntityFilter returns a filter deciding cond (compiled by Condition) on
// entities of the model for the request of ctx, function criteria asked of
// compute members as in search: it keeps the selected entities in order.
// Grouped statistics and delete by condition use it.
func (s *Service) EntityFilter(ctx context.Context, tenant string, key storage.ModelKey, cond *predicate.Condition) (func(es []*storage.Entity) ([]*storage.Entity, error), error) {
	f, err := s.functions(ctx, tenant, key, cond, authOf(ctx))
	if err != nil {
		return nil, err
	}
	return func(es []*storage.Entity) ([]*storage.Entity, error) { return f.filter(es, 0) }, nil
}
