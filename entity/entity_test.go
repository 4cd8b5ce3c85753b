package entity

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseInstant(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"2025-08-01T10:00:00.123456789Z", "2025-08-01T10:00:00.123456789Z", true},
		{"2025-08-01T10:00:00Z", "2025-08-01T10:00:00Z", true},
		// Millisecond precision covers the whole millisecond.
		{"2025-08-01T10:00:00.123Z", "2025-08-01T10:00:00.123999999Z", true},
		{"2025-08-01T10:00:00.123456Z", "2025-08-01T10:00:00.123456999Z", true},
		{"2025-08-01T12:00:00+02:00", "2025-08-01T10:00:00Z", true},
		// An unencoded '+' arrives as a space; no offset means UTC.
		{"2025-08-01T12:00:00 02:00", "2025-08-01T10:00:00Z", true},
		{"2025-08-01T10:00:00", "2025-08-01T10:00:00Z", true},
		{"2025-08-01 10:00:00Z", "2025-08-01T10:00:00Z", true},
		{"yesterday", "", false},
		{"", "", false},
	} {
		got, ok := ParseInstant(c.in)
		if ok != c.ok || ok && got.Format(time.RFC3339Nano) != c.want {
			t.Errorf("ParseInstant(%q) = %v %v, want %s %v", c.in, got.Format(time.RFC3339Nano), ok, c.want, c.ok)
		}
	}
}

// TestMergePatch runs the examples of RFC 7386 appendix A.
func TestMergePatch(t *testing.T) {
	for _, c := range []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		// Numbers keep their text; member order is kept.
		{`{"z":1.50,"n":12345678901234567890}`, `{}`, `{"z":1.50,"n":12345678901234567890}`},
	} {
		got, err := MergePatch([]byte(c.target), []byte(c.patch))
		if err != nil || string(got) != c.want {
			t.Errorf("MergePatch(%s, %s) = %s %v, want %s", c.target, c.patch, got, err, c.want)
		}
	}
}

func FuzzMergePatch(f *testing.F) {
	f.Add([]byte(`{"a":{"b":1}}`), []byte(`{"a":{"b":null,"c":[1]}}`))
	f.Fuzz(func(t *testing.T, target, patch []byte) {
		if !json.Valid(target) || !json.Valid(patch) {
			return
		}
		out, err := MergePatch(target, patch)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("MergePatch(%s, %s) = %s: not JSON", target, patch, out)
		}
		// Applying the same patch again changes nothing (idempotence).
		again, err := MergePatch(out, patch)
		if err != nil || !jsonEqual(again, out) {
			t.Fatalf("not idempotent: %s then %s", out, again)
		}
	})
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func TestSplitArray(t *testing.T) {
	in := `[ {"a":"x,]"} , {"b":[1,{"c":"\"}"}]},{}
	]`
	got := splitArray([]byte(in))
	want := []string{`{"a":"x,]"}`, `{"b":[1,{"c":"\"}"}]}`, `{}`}
	if len(got) != len(want) {
		t.Fatalf("%q", got)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("element %d = %s, want %s", i, got[i], want[i])
		}
	}
	if n := len(splitArray([]byte(`[ ]`))); n != 0 {
		t.Errorf("empty array: %d elements", n)
	}
}

func FuzzSplitArray(f *testing.F) {
	f.Add([]byte(`[{"a":1},{"b":"]"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		b = bytes.TrimSpace(b)
		if len(b) == 0 || b[0] != '[' || !json.Valid(b) {
			return
		}
		var want []json.RawMessage
		if err := json.Unmarshal(b, &want); err != nil {
			return
		}
		got := splitArray(b)
		if len(got) != len(want) {
			t.Fatalf("split %s into %d, want %d", b, len(got), len(want))
		}
		for i := range got {
			if !jsonEqual(got[i], want[i]) {
				t.Fatalf("element %d: %s, want %s", i, got[i], want[i])
			}
		}
	})
}

func TestCheckStates(t *testing.T) {
	if err := CheckStates(make([]string, 1000)); err != nil {
		t.Errorf("1000 states: %v", err)
	}
	err := CheckStates(make([]string, 1001))
	if err == nil || !strings.Contains(err.Error(), "1001 entries; maximum is 1000") {
		t.Errorf("1001 states: %v", err)
	}
}

func TestValidWindow(t *testing.T) {
	for w, ok := range map[int]bool{-1: false, 0: false, 1: true, 1000: true, 1001: false} {
		if (ValidWindow(w) == nil) != ok {
			t.Errorf("window %d", w)
		}
	}
}

func TestDefaultWorkflow(t *testing.T) {
	var wf DefaultWorkflow
	if st, _, _ := wf.OnCreate(nil, "t", nil, nil); st != StateCreated {
		t.Errorf("create lands in %s", st)
	}
	for _, c := range []struct{ from, tr, to string }{{"CREATED", "", "CREATED"}, {"CREATED", "UPDATE", "CREATED"}, {"CREATED", "DELETE", "DELETED"}, {"DELETED", "", "DELETED"}} {
		if st, _, err := wf.OnUpdate(nil, "t", nil, c.from, c.tr, nil); err != nil || st != c.to {
			t.Errorf("%s -%s-> %s %v, want %s", c.from, c.tr, st, err, c.to)
		}
	}
	if _, _, err := wf.OnUpdate(nil, "t", nil, "DELETED", "UPDATE", nil); err == nil || !strings.Contains(err.Error(), "TRANSITION_NOT_FOUND") {
		t.Errorf("transition out of a terminal state: %v", err)
	}
}
