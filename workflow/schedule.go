package workflow

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// apierr.ScheduleFunctionInvalidResult is the error of a schedule function
// whose result cannot be used.

// FunctionCall asks a member for a scheduled transition's fire time
// (EntityFunctionCalculationRequest).
type FunctionCall struct {
	Call
	Function string
}

// FunctionResult is a member's function response.
type FunctionResult struct {
	Success    bool
	ResultKind string
	Result     json.RawMessage
	Error      *MemberError
	Warnings   []string
}

// FunctionDispatcher runs schedule functions on compute members; the
// compute server implements it besides ProcessorDispatcher.
type FunctionDispatcher interface {
	DispatchFunction(ctx context.Context, call *FunctionCall) (*FunctionResult, error)
}

// Arming is when a scheduled transition fires and how late it may fire.
type Arming struct {
	FireAt time.Time
	// TimeoutMs is the late tolerance; nil means no expiry.
	TimeoutMs *int64
	// BornExpired is set when a function's expiry is at or before its fire
	// time: the task is not armed and SCHEDULED_TRANSITION_EXPIRE is
	// recorded instead.
	BornExpired bool
}

// TaskID is the deterministic id of a scheduled-transition task, so that
// re-arming the same transition replaces its task.
func TaskID(tenant, entityID, state, transition string) string {
	sum := sha256.Sum256([]byte("fire-transition|" + tenant + "|" + entityID + "|" + state + "|" + transition))
	return hex.EncodeToString(sum[:16])
}

// StaticArming arms a delayMs schedule at armedAt.
func StaticArming(s *Schedule, armedAt time.Time) Arming {
	a := Arming{FireAt: armedAt.Add(time.Duration(s.DelayMs) * time.Millisecond)}
	if s.TimeoutMs != nil {
		v := *s.TimeoutMs
		a.TimeoutMs = &v
	}
	return a
}

// scheduleResult is the function result; unknown fields are rejected.
type scheduleResult struct {
	FireAt        *int64 `json:"fireAt"`
	FireAfterMs   *int64 `json:"fireAfterMs"`
	ExpireAt      *int64 `json:"expireAt"`
	ExpireAfterMs *int64 `json:"expireAfterMs"`
}

func invalidResult(function, format string, a ...any) error {
	return apierr.New(apierr.ScheduleFunctionInvalidResult,
		fmt.Sprintf("schedule function %q: ", function)+fmt.Sprintf(format, a...))
}

// ResolveFunctionArming turns a schedule function's result into an arming
// (docs/decisions/0018-scheduled-transitions.md): exactly one of fireAt (epoch ms) or fireAfterMs (from
// armedAt), at most one of expireAt or expireAfterMs (from the fire time).
// A past fireAt is due at once. Anything else is 500
// SCHEDULE_FUNCTION_INVALID_RESULT.
func ResolveFunctionArming(function string, res *FunctionResult, armedAt time.Time) (Arming, error) {
	if res.ResultKind != "Schedule" {
		return Arming{}, invalidResult(function, "resultKind %q, want \"Schedule\"", res.ResultKind)
	}
	if isNull(res.Result) {
		return Arming{}, invalidResult(function, "result is missing")
	}
	var r scheduleResult
	dec := json.NewDecoder(bytes.NewReader(res.Result))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Arming{}, invalidResult(function, "result: %v", err)
	}
	if (r.FireAt == nil) == (r.FireAfterMs == nil) {
		return Arming{}, invalidResult(function, "exactly one of fireAt or fireAfterMs is required")
	}
	if r.ExpireAt != nil && r.ExpireAfterMs != nil {
		return Arming{}, invalidResult(function, "at most one of expireAt or expireAfterMs is allowed")
	}
	var a Arming
	if r.FireAt != nil {
		a.FireAt = time.UnixMilli(*r.FireAt)
	} else {
		if *r.FireAfterMs < 0 {
			return Arming{}, invalidResult(function, "fireAfterMs must be 0 or more")
		}
		a.FireAt = armedAt.Add(time.Duration(*r.FireAfterMs) * time.Millisecond)
	}
	var expire time.Time
	switch {
	case r.ExpireAt != nil:
		expire = time.UnixMilli(*r.ExpireAt)
	case r.ExpireAfterMs != nil:
		expire = a.FireAt.Add(time.Duration(*r.ExpireAfterMs) * time.Millisecond)
	default:
		return a, nil
	}
	if !expire.After(a.FireAt) {
		a.BornExpired = true
		return a, nil
	}
	ms := expire.Sub(a.FireAt).Milliseconds()
	a.TimeoutMs = &ms
	return a, nil
}
