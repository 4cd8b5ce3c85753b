package workflow

import (
	"context"
	"fmt"

	json "github.com/goccy/go-json"
)

// TargetNone is the criteria target of a function condition met outside a
// workflow: in search, grouped statistics and delete by condition there is
// neither a workflow nor a transition. The protocol's target enum reserves
// NA ("not applicable") for this; WORKFLOW or TRANSITION would tell the
// member about a workflow step that is not happening.
const TargetNone = "NA"

// CriteriaDispatcher sends one criteria request to a compute member; the
// compute server implements it (as part of ProcessorDispatcher).
type CriteriaDispatcher interface {
	DispatchCriteria(ctx context.Context, call *CriteriaCall) (*CriteriaResult, error)
}

// FunctionCondition is how to dispatch a function condition outside a
// workflow, read once from its "function" member with the rules workflow
// criteria follow (tags split on commas, attachEntity default true,
// responseTimeoutMs 0 meaning 30 s, config.context as the parameters).
type FunctionCondition struct {
	spec functionSpec
}

type functionMember struct {
	Name   string `json:"name"`
	Config *struct {
		CalculationNodesTags string `json:"calculationNodesTags"`
		AttachEntity         *bool  `json:"attachEntity"`
		ResponseTimeoutMs    int64  `json:"responseTimeoutMs"`
		Context              string `json:"context"`
	} `json:"config"`
}

// ParseFunctionCondition reads a function condition's "function" member.
// A member whose config fields have the wrong JSON types is an error.
func ParseFunctionCondition(raw json.RawMessage) (*FunctionCondition, error) {
	var m functionMember
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("function condition: %w", err)
	}
	f := &FunctionCondition{spec: functionSpec{name: m.Name, attach: true, timeout: timeoutOf(0)}}
	if cfg := m.Config; cfg != nil {
		f.spec.tagsCSV = cfg.CalculationNodesTags
		f.spec.tags = splitTags(cfg.CalculationNodesTags)
		f.spec.attach = cfg.AttachEntity == nil || *cfg.AttachEntity
		f.spec.timeout = timeoutOf(cfg.ResponseTimeoutMs)
		f.spec.context = cfg.Context
	}
	return f, nil
}

// Call is the criteria request for one entity, with target NA and empty
// workflow and transition references. data is sent only when the
// condition attaches the entity.
func (f *FunctionCondition) Call(tenant string, auth Auth, meta Meta, data []byte) *CriteriaCall {
	c := &CriteriaCall{Call: Call{
		Tenant: tenant, Auth: auth, Meta: meta,
		Tags: f.spec.tags, TagsCSV: f.spec.tagsCSV, Parameters: f.spec.context, Timeout: f.spec.timeout,
	}, Criteria: f.spec.name, Target: TargetNone}
	if f.spec.attach {
		c.Data = data
	}
	return c
}
