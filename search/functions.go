package search

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"svc/apierr"
	"svc/iam"
	"svc/predicate"
	"svc/storage"
	"svc/workflow"
)

// CodeFunctionConditionFailed is the error of a function condition whose
// compute member answered success:false (or could not be sent the
// request): the condition cannot be decided for that entity, so the whole
// request fails.
const CodeFunctionConditionFailed = "FUNCTION_CONDITION_FAILED"

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
			return nil, apierr.New("INVALID_CONDITION", err.Error(), apierr.P("function", f.Name))
		}
		specs[f] = fc
	}
	return specs, nil
}

// functions evaluates a condition with function criteria against the
// entities of one request, sequentially: each function criterion the
// evaluation reaches becomes an EntityCriteriaCalculationRequest for the
// entity under evaluation, sent to a member of the tenant serving the
// condition's tags, and its matches is the leaf's value.
type functions struct {
	ctx    context.Context
	tenant string
	model  storage.ModelKey
	auth   workflow.Auth
	d      workflow.CriteriaDispatcher
	cond   *predicate.Condition
	specs  map[*predicate.Function]*workflow.FunctionCondition

	e    *storage.Entity // under evaluation
	meta predicate.Meta
}

func (s *Service) functions(ctx context.Context, tenant string, key storage.ModelKey, cond *predicate.Condition, auth workflow.Auth) (*functions, error) {
	specs, err := functionSpecs(cond)
	if err != nil {
		return nil, err
	}
	return &functions{ctx: ctx, tenant: tenant, model: key, auth: auth, d: s.dispatcher(), cond: cond, specs: specs}, nil
}

// match is the full condition's verdict on e.
func (f *functions) match(e *storage.Entity) (bool, error) {
	f.e = e
	f.meta = predicate.Meta{ID: uuid.UUID(e.ID).String(), State: e.State, TransitionForLatestSave: e.Transition,
		TransactionID: uuid.UUID(e.TxID).String(), CreationDate: e.CreatedAt, LastUpdateTime: e.UpdatedAt}
	return f.cond.Eval(e.Data, &f.meta, f)
}

// filter keeps the entities the full condition selects, in order, and
// stops once it has more than max (max > 0).
func (f *functions) filter(es []*storage.Entity, max int) ([]*storage.Entity, error) {
	out := es[:0]
	for _, e := range es {
		ok, err := f.match(e)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, e)
			if max > 0 && len(out) > max {
				break
			}
		}
	}
	return out, nil
}

// CallFunction implements predicate.FunctionCaller for the entity under
// evaluation.
func (f *functions) CallFunction(fn *predicate.Function) (bool, error) {
	spec := f.specs[fn]
	if spec == nil {
		// Every function of the condition was read in functionSpecs.
		return false, errors.New("search: function condition " + fn.Name + " was not prepared")
	}
	call := spec.Call(f.tenant, f.auth, workflow.Meta{
		ID: f.meta.ID, ModelName: f.model.Name, ModelVersion: f.model.Version, State: f.e.State,
		CreationDate: f.e.CreatedAt, LastUpdateTime: f.e.UpdatedAt, TransactionID: f.meta.TransactionID,
		TransitionForLatestSave: f.e.Transition,
	}, f.e.Data)
	if f.d == nil {
		return false, workflow.NoMemberForTag(call.TagsCSV)
	}
	res, err := f.d.DispatchCriteria(f.ctx, call)
	if err != nil {
		if _, ok := apierr.As(err); ok || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return false, err
		}
		return false, &apierr.Error{Code: CodeFunctionConditionFailed, Cause: err,
			Message: "function condition " + fn.Name + " on entity " + f.meta.ID + ": " + err.Error(),
			Props:   []apierr.Prop{apierr.P("function", fn.Name), apierr.P("entityId", f.meta.ID)}}
	}
	if !res.Success {
		msg := "member returned failure"
		if res.Error != nil && res.Error.Message != "" {
			msg = res.Error.Message
		}
		return false, apierr.New(CodeFunctionConditionFailed, "function condition "+fn.Name+" on entity "+f.meta.ID+" failed: "+msg,
			apierr.P("function", fn.Name), apierr.P("entityId", f.meta.ID))
	}
	return res.Matches, nil
}

// EntityMatcher returns the verdict of cond (compiled by Condition) on
// entities of the model, for the request of ctx: function criteria go to
// compute members as in search. Grouped statistics and delete by
// condition use it; the returned function is for one goroutine.
func (s *Service) EntityMatcher(ctx context.Context, tenant string, key storage.ModelKey, cond *predicate.Condition) (func(e *storage.Entity) (bool, error), error) {
	f, err := s.functions(ctx, tenant, key, cond, authOf(ctx))
	if err != nil {
		return nil, err
	}
	return f.match, nil
}
