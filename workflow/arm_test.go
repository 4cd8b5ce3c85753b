package workflow

import (
	"context"
	"svc/platform/apierr"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// funcDispatcher answers schedule functions with a fixed result and
// records the call.
type funcDispatcher struct {
	res  *FunctionResult
	err  error
	call *FunctionCall
}

func (f *funcDispatcher) DispatchProcessor(context.Context, *ProcessorCall) (*ProcessorResult, error) {
	return nil, NoMemberForTag("")
}

func (f *funcDispatcher) DispatchCriteria(context.Context, *CriteriaCall) (*CriteriaResult, error) {
	return nil, NoMemberForTag("")
}

func (f *funcDispatcher) DispatchFunction(_ context.Context, c *FunctionCall) (*FunctionResult, error) {
	f.call = c
	return f.res, f.err
}

func TestArm(t *testing.T) {
	set := setOf(t, wf("w", "WAIT", `{
	  "WAIT":{"transitions":[
	    {"name":"static","next":"DONE","manual":false,"schedule":{"delayMs":1500,"timeoutMs":0}},
	    {"name":"fn","next":"DONE","manual":false,"schedule":{"function":{"name":"when","resultKind":"Schedule","calculationNodesTags":"a, b","attachEntity":false,"context":"ctx"}}},
	    {"name":"go","next":"DONE","manual":true}]},
	  "DONE":{}}`))
	if !set.HasSchedules() || setOf(t).HasSchedules() {
		t.Fatal("HasSchedules")
	}
	if set.ScheduledTransition("WAIT", "static") == nil || set.ScheduledTransition("WAIT", "go") != nil || set.ScheduledTransition("DONE", "static") != nil {
		t.Fatal("ScheduledTransition")
	}
	d := &funcDispatcher{res: &FunctionResult{Success: true, ResultKind: "Schedule", Result: json.RawMessage(`{"fireAfterMs":200,"expireAfterMs":50}`)}}
	e := engine(d)
	now := e.Now()
	r := newRun(`{"x":1}`)
	out, err := e.Create(context.Background(), set, r)
	if err != nil || len(out.Scheduled) != 2 {
		t.Fatalf("%v %+v", err, out)
	}
	plans, err := e.Arm(context.Background(), r, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 2 || plans[0].Transition != "static" || !plans[0].Arming.FireAt.Equal(now.Add(1500*time.Millisecond)) ||
		*plans[0].Arming.TimeoutMs != 0 || plans[1].Transition != "fn" || !plans[1].Arming.FireAt.Equal(now.Add(200*time.Millisecond)) ||
		*plans[1].Arming.TimeoutMs != 50 {
		t.Fatalf("plans %+v", plans)
	}
	c := d.call
	if c.Function != "when" || c.Data != nil || c.TagsCSV != "a, b" || len(c.Tags) != 2 || c.Parameters != "ctx" || c.Transition != "fn" ||
		c.StateFrom != "WAIT" || c.StateTo != "DONE" || c.Workflow != "w" || c.Meta.ID != "e1" || c.TransactionID != "tx-1" {
		t.Fatalf("call %+v", c)
	}

	d.res = &FunctionResult{Success: true, ResultKind: "Other", Result: json.RawMessage(`{"fireAt":1}`)}
	_, err = e.Arm(context.Background(), r, out)
	wantCode(t, err, apierr.ScheduleFunctionInvalidResult.String(), "resultKind")

	d.res = &FunctionResult{Success: false, Error: &MemberError{Message: "nope"}}
	_, err = e.Arm(context.Background(), r, out)
	wantCode(t, err, apierr.WorkflowFailed.String(), "schedule function when failed: nope")

	// No function dispatcher: no member serves the tags (503, retryable).
	_, err = engine(nil).Arm(context.Background(), r, out)
	wantCode(t, err, apierr.NoComputeMemberForTag.String(), "a, b")
}
