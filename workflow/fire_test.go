package workflow

import (
	"context"
	"svc/platform/apierr"
	"testing"
	"time"
)

func TestFireScheduled(t *testing.T) {
	set := setOf(t, wf("w", "WAIT", `{
	  "WAIT":{"transitions":[
	    {"name":"timeout","next":"LATE","manual":false,"schedule":{"delayMs":1000},"criterion":`+eq("open", "true")+`},
	    {"name":"off","next":"LATE","manual":false,"disabled":true,"schedule":{"delayMs":1000}}]},
	  "LATE":{"transitions":[{"name":"close","next":"CLOSED","manual":false}]},
	  "CLOSED":{"transitions":[{"name":"again","next":"WAIT","manual":false,"schedule":{"delayMs":5}}]}}`))
	e, ctx := engine(nil), context.Background()

	r := newRun(`{"open":true}`)
	r.Entity.Meta.State = "WAIT"
	out, res, err := e.FireScheduled(ctx, set, r, "WAIT", "timeout")
	if err != nil || res != Fired || out.State != "CLOSED" {
		t.Fatalf("%v %v %+v", err, res, out)
	}
	if got := eventTypes(out); got != "TRANSITION_MAKE TRANSITION_MAKE SCHEDULED_TRANSITION_FIRE" {
		t.Fatalf("events %s", got)
	}
	if ev := findEvent(out, EventScheduledTransitionFire); string(ev.Data) != `{"transition":"timeout","sourceState":"WAIT"}` {
		t.Fatalf("fire data %s", ev.Data)
	}
	if r.Entity.Meta.TransitionForLatestSave != "timeout" || len(out.Scheduled) != 1 || out.Scheduled[0].Name != "again" {
		t.Fatalf("meta %+v scheduled %v", r.Entity.Meta, out.Scheduled)
	}

	for _, tc := range []struct {
		name, data, state, source, tr string
		want                          FireResult
		events                        string
	}{
		{"criterion false declines", `{"open":false}`, "WAIT", "WAIT", "timeout", Declined, "TRANSITION_NOT_MATCH_CRITERION"},
		{"entity left the state", `{"open":true}`, "LATE", "WAIT", "timeout", Gone, ""},
		{"transition removed", `{"open":true}`, "WAIT", "WAIT", "vanished", Gone, ""},
		{"disabled", `{"open":true}`, "WAIT", "WAIT", "off", Gone, ""},
		{"not scheduled", `{"open":true}`, "LATE", "LATE", "close", Gone, ""},
	} {
		r := newRun(tc.data)
		r.Entity.Meta.State = tc.state
		out, res, err := e.FireScheduled(ctx, set, r, tc.source, tc.tr)
		if err != nil || res != tc.want || eventTypes(out) != tc.events || r.Entity.Meta.State != tc.state {
			t.Errorf("%s: %v %v %q %s", tc.name, err, res, eventTypes(out), r.Entity.Meta.State)
		}
	}
	// An evaluation error leaves the task for a retry.
	bad := setOf(t, wf("w", "WAIT", `{"WAIT":{"transitions":[{"name":"t","next":"WAIT","manual":false,"schedule":{"delayMs":1},"criterion":{"type":"mystery"}}]}}`))
	r = newRun(`{}`)
	r.Entity.Meta.State = "WAIT"
	_, _, err = e.FireScheduled(ctx, bad, r, "WAIT", "t")
	wantCode(t, err, apierr.WorkflowFailed.String(), "failed to evaluate transition criterion")
}

func TestCheckLateness(t *testing.T) {
	at := time.Unix(100, 0)
	ms := func(v int64) *int64 { return &v }
	grace := 100 * time.Millisecond
	for _, tc := range []struct {
		late    time.Duration
		timeout *int64
		want    Expiry
	}{
		{time.Hour, nil, FireNow},
		{0, ms(0), FireNow},
		{50 * time.Millisecond, ms(0), WaitGrace},
		{100 * time.Millisecond, ms(0), WaitGrace},
		{101 * time.Millisecond, ms(0), Expire},
		{time.Second, ms(1000), FireNow},
		{1050 * time.Millisecond, ms(1000), WaitGrace},
		{2 * time.Second, ms(1000), Expire},
	} {
		if got := CheckLateness(at, at.Add(tc.late), tc.timeout, grace); got != tc.want {
			t.Errorf("late %v timeout %v: %v, want %v", tc.late, tc.timeout, got, tc.want)
		}
	}
}

func TestScheduledEvents(t *testing.T) {
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := ScheduledEvent(EventScheduledTransitionArm, "e", "WAIT", "tx", "timeout", "WAIT", when, when)
	// scheduledTime is the task's scheduled_time: Unix milliseconds.
	if string(ev.Data) != `{"transition":"timeout","sourceState":"WAIT","scheduledTime":1767323045000}` || ev.State != "WAIT" {
		t.Fatalf("arm %s", ev.Data)
	}
	ev = ScheduledEvent(EventScheduledTransitionCancel, "e", "DONE", "tx", "timeout", "WAIT", time.Time{}, when)
	if string(ev.Data) != `{"transition":"timeout","sourceState":"WAIT"}` {
		t.Fatalf("cancel %s", ev.Data)
	}
}
