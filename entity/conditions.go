package entity

import (
	"context"
	"time"

	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/predicate"
	"svc/storage"
)

// ConditionCompiler compiles a condition body against a model of the
// tenant, with the same checks and error codes as search (404
// MODEL_NOT_FOUND, INVALID_CONDITION, INVALID_FIELD_PATH,
// CONDITION_TYPE_MISMATCH). search.Service satisfies it; entity cannot
// import search without a cycle, so the seam is this interface.
type ConditionCompiler interface {
	Condition(ctx context.Context, tenant string, key storage.ModelKey, body []byte) (*predicate.Condition, error)
}

// WithConditions enables condition bodies on delete-by-model and in the
// grouped statistics query; without it they answer 501.
func WithConditions(c ConditionCompiler) Option { return func(s *Service) { s.conds = c } }

// EntityFilters is what a ConditionCompiler offers when it can decide
// conditions with function criteria: a filter over entities of one
// request, keeping the selected ones in order, that asks compute members
// for the functions on behalf of the request's principal. search.Service
// implements it.
type EntityFilters interface {
	EntityFilter(ctx context.Context, tenant string, key storage.ModelKey, cond *predicate.Condition) (func(es []*storage.Entity) ([]*storage.Entity, error), error)
}

// condition compiles body for the model key. A body that does not parse
// is 400 INVALID_CONDITION here, where search says BAD_REQUEST
// (docs/decisions/0020-conditions.md).
func (s *Service) condition(ctx context.Context, tenant string, key storage.ModelKey, body []byte) (*predicate.Condition, error) {
	if s.conds == nil {
		return nil, apierr.New(apierr.NotImplemented, "conditions are not available: no condition compiler is configured")
	}
	c, err := s.conds.Condition(ctx, tenant, key, body)
	if err != nil {
		if e, ok := apierr.As(err); ok && e.Code == apierr.BadRequest {
			return nil, &apierr.Error{Code: apierr.InvalidCondition, Message: e.Message, Props: e.Props, Cause: e}
		}
		return nil, err
	}
	if c.HasFunctions() {
		if _, ok := s.conds.(EntityFilters); !ok {
			return nil, apierr.New(apierr.NotImplemented, "function conditions need a compute dispatcher, which is not configured")
		}
	}
	return c, nil
}

// scanMatching calls fn for every live entity of the model (as of at) that
// cond selects. Without function criteria the condition is evaluated
// inside the scan. With them, the scan only collects the candidates of the
// condition's Pushdown (copies: a scan's entity must not be retained), and
// the full condition, compute-member round trips included, runs after the
// scan has ended, so no storage lock or pooled connection is held while a
// member answers. Any evaluation error ends the walk and is returned.
func (s *Service) scanMatching(ctx context.Context, tenant string, key storage.ModelKey, at *time.Time, cond *predicate.Condition, fn func(e *storage.Entity) error) error {
	var meta predicate.Meta
	if cond == nil || !cond.HasFunctions() {
		return s.store.Scan(ctx, tenant, key, at, func(e *storage.Entity) error {
			if cond != nil {
				metaOf(e, &meta)
				if !cond.Match(e.Data, &meta) {
					return nil
				}
			}
			return fn(e)
		})
	}
	filter, err := s.conds.(EntityFilters).EntityFilter(ctx, tenant, key, cond)
	if err != nil {
		return err
	}
	pre := cond.Pushdown()
	var cands []*storage.Entity
	err = s.store.Scan(ctx, tenant, key, at, func(e *storage.Entity) error {
		metaOf(e, &meta)
		if pre.Match(e.Data, &meta) {
			c := *e
			c.Data = append([]byte(nil), e.Data...)
			cands = append(cands, &c)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if cands, err = filter(cands); err != nil {
		return err
	}
	for _, e := range cands {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// metaOf is the lifecycle view of e that conditions read.
func metaOf(e *storage.Entity, m *predicate.Meta) {
	*m = predicate.Meta{ID: uuid.UUID(e.ID).String(), State: e.State, TransitionForLatestSave: e.Transition,
		TransactionID: uuid.UUID(e.TxID).String(), CreationDate: e.CreatedAt, LastUpdateTime: e.UpdatedAt}
}

// hasCondition reports whether a request carried a condition: an absent,
// empty or null condition selects everything.
func hasCondition(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return string(trimSpace(raw)) != "null"
	}
	return false
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}
