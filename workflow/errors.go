package workflow

import (
	"fmt"

	"svc/platform/apierr"
)

// Error codes the package emits (help/topics/errors/<CODE>.md).

func validationFailed(format string, a ...any) error {
	return apierr.New(apierr.ValidationFailed, fmt.Sprintf(format, a...))
}

func workflowFailed(msg string, cause error) error {
	return &apierr.Error{Code: apierr.WorkflowFailed, Message: msg, Cause: cause}
}

func transitionNotFound(msg string) error {
	return apierr.New(apierr.TransitionNotFound, msg)
}

// NoMemberForTag is the error of a dispatch that found no compute member of
// the tenant carrying one of the required tags.
func NoMemberForTag(tags string) error {
	return &apierr.Error{Code: apierr.NoComputeMemberForTag, Retryable: true,
		Message: fmt.Sprintf("no matching calculation member is connected: tags %q", tags),
		Props:   []apierr.Prop{apierr.P("tags", tags)}}
}

// DispatchTimeout is the error of a dispatch that got no answer in time.
func DispatchTimeout(what string, timeoutMs int64) error {
	return &apierr.Error{Code: apierr.DispatchTimeout, Retryable: true,
		Message: fmt.Sprintf("%s: no response from the compute member within %d ms", what, timeoutMs)}
}

// MemberDisconnected is the error of a dispatch whose member's stream ended
// while the call was pending.
func MemberDisconnected(what string) error {
	return &apierr.Error{Code: apierr.ComputeMemberDisconnected, Retryable: true,
		Message: what + ": compute member disconnected"}
}

// classified reports whether err already carries a catalogue code, which
// the engine passes through unchanged (docs/decisions/0017-workflow-engine.md, error mapping).
func classified(err error) bool {
	e, ok := apierr.As(err)
	return ok && e.Code != apierr.WorkflowFailed
}
