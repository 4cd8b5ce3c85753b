package entity

import (
	"context"

	"svc/platform/apierr"
)

// ErrClientGone ends work whose client closed its connection: nobody is
// left to read the answer, so the work stops between phases and writes
// nothing. The HTTP layer answers it with no body.
var ErrClientGone = apierr.New(apierr.ClientGone, "the client closed the connection; the request stopped and wrote nothing")

type goneKey struct{}

// WithClientGone returns ctx carrying gone, which tells whether the client
// of the request has closed its connection. The HTTP layer sets it; long
// operations poll it between phases (see clientGone). gone must be cheap
// and safe to call from the request's goroutine.
func WithClientGone(ctx context.Context, gone func() bool) context.Context {
	if gone == nil {
		return ctx
	}
	return context.WithValue(ctx, goneKey{}, gone)
}

// clientGone is ErrClientGone once the client of ctx's request has gone,
// nil while it is there or when nothing tells. It does not consult
// ctx.Err(): a server draining for shutdown still finishes what it began.
func clientGone(ctx context.Context) error {
	if gone, ok := ctx.Value(goneKey{}).(func() bool); ok && gone() {
		return ErrClientGone
	}
	return nil
}

// ClientGone tells whether the client of ctx's request is known to have
// gone (false when ctx carries no check).
func ClientGone(ctx context.Context) bool { return clientGone(ctx) != nil }

// stopCheck is clientGone(ctx) as a poll for long loops, or nil when ctx
// carries no check.
func stopCheck(ctx context.Context) func() error {
	gone, ok := ctx.Value(goneKey{}).(func() bool)
	if !ok {
		return nil
	}
	return func() error {
		if gone() {
			return ErrClientGone
		}
		return nil
	}
}

// PatchPhase names a step of Service.Patch, for WithPatchHook.
type PatchPhase string

// The phases of a merge patch, in order; PatchAbandoned replaces the rest
// when the client went away.
const (
	PatchChecked   PatchPhase = "checked"   // body within limits and valid JSON
	PatchLoaded    PatchPhase = "loaded"    // entity read, If-Match held
	PatchMerged    PatchPhase = "merged"    // merged document built
	PatchCommit    PatchPhase = "commit"    // workflow ran, about to write
	PatchAbandoned PatchPhase = "abandoned" // the client left; nothing written
)

// WithPatchHook calls h at each phase of every merge patch, on the
// request's goroutine: an observation point for tests and instrumentation,
// not a place to change the request.
func WithPatchHook(h func(ctx context.Context, p PatchPhase)) Option {
	return func(s *Service) { s.patchHook = h }
}

func (s *Service) patchPhase(ctx context.Context, p PatchPhase) {
	if s.patchHook != nil {
		s.patchHook(ctx, p)
	}
}
