package workflow

import (
	"svc/platform/apierr"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

func TestResolveFunctionArming(t *testing.T) {
	armed := time.UnixMilli(1_000_000)
	for _, tc := range []struct {
		name, kind, result string
		fire               int64 // epoch ms
		timeout            int64 // -1: none
		expired            bool
		bad                string
	}{
		{"fireAfterMs", "Schedule", `{"fireAfterMs":3600000}`, 1_000_000 + 3_600_000, -1, false, ""},
		{"fireAt past is due", "Schedule", `{"fireAt":5}`, 5, -1, false, ""},
		{"expireAfterMs from fire time", "Schedule", `{"fireAfterMs":1000,"expireAfterMs":600}`, 1_001_000, 600, false, ""},
		{"expireAt after fire", "Schedule", `{"fireAt":2000000,"expireAt":2000250}`, 2_000_000, 250, false, ""},
		{"born expired", "Schedule", `{"fireAt":2000000,"expireAt":2000000}`, 2_000_000, -1, true, ""},
		{"wrong kind", "Delay", `{"fireAfterMs":1}`, 0, 0, false, `resultKind "Delay"`},
		{"no result", "Schedule", `null`, 0, 0, false, "missing"},
		{"no fire field", "Schedule", `{"expireAfterMs":5}`, 0, 0, false, "exactly one of fireAt or fireAfterMs"},
		{"two fire fields", "Schedule", `{"fireAt":1,"fireAfterMs":1}`, 0, 0, false, "exactly one of"},
		{"two expire fields", "Schedule", `{"fireAt":1,"expireAt":3,"expireAfterMs":1}`, 0, 0, false, "at most one"},
		{"unknown field", "Schedule", `{"fireAt":1,"when":"now"}`, 0, 0, false, `unknown field "when"`},
		{"not integer", "Schedule", `{"fireAt":1.5}`, 0, 0, false, "result"},
		{"negative delay", "Schedule", `{"fireAfterMs":-1}`, 0, 0, false, "0 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ResolveFunctionArming("f", &FunctionResult{Success: true, ResultKind: tc.kind, Result: json.RawMessage(tc.result)}, armed)
			if tc.bad != "" {
				wantCode(t, err, apierr.ScheduleFunctionInvalidResult.String(), tc.bad)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.FireAt.UnixMilli() != tc.fire || a.BornExpired != tc.expired {
				t.Fatalf("%+v", a)
			}
			if (a.TimeoutMs == nil) != (tc.timeout < 0) || (a.TimeoutMs != nil && *a.TimeoutMs != tc.timeout) {
				t.Fatalf("timeout %v, want %d", a.TimeoutMs, tc.timeout)
			}
		})
	}
}

func TestStaticArmingAndTaskID(t *testing.T) {
	zero := int64(0)
	a := StaticArming(&Schedule{DelayMs: 1500, TimeoutMs: &zero}, time.UnixMilli(10))
	if a.FireAt.UnixMilli() != 1510 || a.TimeoutMs == nil || *a.TimeoutMs != 0 || a.TimeoutMs == &zero {
		t.Fatalf("%+v", a)
	}
	if a := StaticArming(&Schedule{DelayMs: 1}, time.UnixMilli(0)); a.TimeoutMs != nil {
		t.Fatal("absent timeout became set")
	}
	id := TaskID("t", "e", "S", "tr")
	if len(id) != 32 || id != TaskID("t", "e", "S", "tr") || id == TaskID("t2", "e", "S", "tr") || id == TaskID("t", "e", "S2", "tr") {
		t.Fatalf("task ids: %s", id)
	}
}
