package workflow

import (
	"context"
	"errors"
	"sync"
)

// LocalProcessor is a processor implemented in Go inside svc.
type LocalProcessor func(ctx context.Context, call *ProcessorCall) (*ProcessorResult, error)

// LocalCriteria is a function criterion implemented in Go inside svc.
type LocalCriteria func(ctx context.Context, call *CriteriaCall) (*CriteriaResult, error)

// LocalDispatcher dispatches processors and function criteria to Go
// functions registered by name, in process. A name without a function
// answers like a tag no member serves. Each call runs under its
// responseTimeoutMs; a function that returns after the deadline has its
// result dropped as DISPATCH_TIMEOUT.
type LocalDispatcher struct {
	mu    sync.RWMutex
	procs map[string]LocalProcessor
	crits map[string]LocalCriteria
}

// NewLocalDispatcher returns an empty dispatcher.
func NewLocalDispatcher() *LocalDispatcher {
	return &LocalDispatcher{procs: map[string]LocalProcessor{}, crits: map[string]LocalCriteria{}}
}

// Processor registers fn under a processor name.
func (d *LocalDispatcher) Processor(name string, fn LocalProcessor) {
	d.mu.Lock()
	d.procs[name] = fn
	d.mu.Unlock()
}

// Criteria registers fn under a function criterion name.
func (d *LocalDispatcher) Criteria(name string, fn LocalCriteria) {
	d.mu.Lock()
	d.crits[name] = fn
	d.mu.Unlock()
}

// DispatchProcessor implements ProcessorDispatcher.
func (d *LocalDispatcher) DispatchProcessor(ctx context.Context, call *ProcessorCall) (*ProcessorResult, error) {
	d.mu.RLock()
	fn := d.procs[call.Processor]
	d.mu.RUnlock()
	if fn == nil {
		return nil, NoMemberForTag(call.TagsCSV)
	}
	ctx, cancel := context.WithTimeout(ctx, call.Timeout)
	defer cancel()
	res, err := fn(ctx, call)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, DispatchTimeout("processor "+call.Processor, call.Timeout.Milliseconds())
	}
	return res, err
}

// DispatchCriteria implements ProcessorDispatcher.
func (d *LocalDispatcher) DispatchCriteria(ctx context.Context, call *CriteriaCall) (*CriteriaResult, error) {
	d.mu.RLock()
	fn := d.crits[call.Criteria]
	d.mu.RUnlock()
	if fn == nil {
		return nil, NoMemberForTag(call.TagsCSV)
	}
	ctx, cancel := context.WithTimeout(ctx, call.Timeout)
	defer cancel()
	res, err := fn(ctx, call)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, DispatchTimeout("criteria "+call.Criteria, call.Timeout.Milliseconds())
	}
	return res, err
}
