package workflow

import (
	"context"
	"errors"
	"sync"

	json "github.com/goccy/go-json"

	"svc/predicate"
)

// PredicateCriteria is the CriteriaEvaluator and ConditionChecker of the
// service: criteria are conditions of the predicate language, compiled
// without a model schema (a workflow criterion may name paths the model
// does not know yet, docs/decisions/0020-conditions.md) and kept compiled, keyed by their bytes,
// so an entity write does not re-parse its workflow's criteria. Safe for
// concurrent use.
type PredicateCriteria struct {
	mu       sync.RWMutex
	max      int
	compiled map[string]*predicate.Condition
}

// NewPredicateCriteria keeps at most max compiled criteria (0 means 4096);
// when full it starts over, which costs a recompile, never a wrong answer.
func NewPredicateCriteria(max int) *PredicateCriteria {
	if max <= 0 {
		max = 4096
	}
	return &PredicateCriteria{max: max, compiled: make(map[string]*predicate.Condition)}
}

var (
	_ CriteriaEvaluator = (*PredicateCriteria)(nil)
	_ ConditionChecker  = (*PredicateCriteria)(nil)
)

// CheckCondition validates a criterion at import: it must parse and compile
// (operators, group operators, operand shapes, regular expressions,
// lifecycle fields and their operand types). The caller reports a failure
// as VALIDATION_FAILED.
func (p *PredicateCriteria) CheckCondition(cond json.RawMessage) error {
	_, err := p.condition(cond)
	return err
}

// Eval evaluates cond against an entity. A condition that does not compile
// is an evaluation error the engine reports as WORKFLOW_FAILED, not as the
// predicate's own 400 code: the stored workflow is at fault, not the
// request. Errors of nested function conditions (e.g. 503
// NO_COMPUTE_MEMBER_FOR_TAG) pass through unchanged.
func (p *PredicateCriteria) Eval(ctx context.Context, cond json.RawMessage, data []byte, meta Meta, fn FunctionCaller) (bool, error) {
	c, err := p.condition(cond)
	if err != nil {
		return false, errors.New("invalid criterion: " + errText(err))
	}
	pm := predicate.Meta{ID: meta.ID, State: meta.State, CreationDate: meta.CreationDate,
		LastUpdateTime: meta.LastUpdateTime, TransitionForLatestSave: meta.TransitionForLatestSave,
		TransactionID: meta.TransactionID}
	if !c.HasFunctions() {
		return c.Match(data, &pm), nil
	}
	if fn == nil {
		return false, errors.New("function condition without a compute dispatcher")
	}
	return c.Eval(data, &pm, &functionBridge{ctx: ctx, fn: fn})
}

// condition returns the compiled form of cond, compiling it on a miss.
// The map is read with a string(cond) conversion the compiler does not
// allocate for.
func (p *PredicateCriteria) condition(cond json.RawMessage) (*predicate.Condition, error) {
	p.mu.RLock()
	c, ok := p.compiled[string(cond)]
	p.mu.RUnlock()
	if ok {
		return c, nil
	}
	c, err := predicate.Compile(cond, nil)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if len(p.compiled) >= p.max {
		clear(p.compiled)
	}
	p.compiled[string(cond)] = c
	p.mu.Unlock()
	return c, nil
}

// functionBridge hands a nested function condition to the engine's
// FunctionCaller as the whole {"type":"function",...} object it expects.
type functionBridge struct {
	ctx context.Context
	fn  FunctionCaller
}

func (b *functionBridge) CallFunction(f *predicate.Function) (bool, error) {
	raw := make([]byte, 0, len(f.Raw)+32)
	raw = append(raw, `{"type":"function","function":`...)
	raw = append(raw, f.Raw...)
	raw = append(raw, '}')
	return b.fn(b.ctx, raw)
}
