package entity

import (
	"context"

	"github.com/google/uuid"

	"svc/apierr"
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

// condition compiles body for the model key. Function conditions need a
// compute member round trip per entity, which these bulk paths do not make;
// they answer 501 as search does.
func (s *Service) condition(ctx context.Context, tenant string, key storage.ModelKey, body []byte) (*predicate.Condition, error) {
	if s.conds == nil {
		return nil, apierr.New("NOT_IMPLEMENTED", "conditions are not available: no condition compiler is configured")
	}
	c, err := s.conds.Condition(ctx, tenant, key, body)
	if err != nil {
		return nil, err
	}
	if c.HasFunctions() {
		return nil, apierr.New("NOT_IMPLEMENTED", "function conditions are not supported in bulk deletes and grouped statistics")
	}
	return c, nil
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
