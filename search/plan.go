package search

import (
	"context"

	"svc/platform/apierr"

	"svc/storage"
)

// Plan validates and compiles a condition and sort keys against a model
// exactly as a direct search does (same errors, same compiled condition
// and sort classes), for other areas that read through the search plan
// (stream data). Function criteria are refused: a plan runs in the engine.
func (s *Service) Plan(ctx context.Context, tenant string, key storage.ModelKey, cond []byte, sort []string) (*storage.SearchQuery, error) {
	q, err := s.prepare(ctx, tenant, key, cond, sort, nil)
	if err != nil {
		return nil, err
	}
	if q.Cond != nil && q.Cond.HasFunctions() {
		return nil, errFunctionsInPlan
	}
	return q, nil
}

var errFunctionsInPlan = apierr.New(apierr.InvalidCondition, "function conditions cannot be compiled to a storage plan",
	apierr.P("operator", "function"))
