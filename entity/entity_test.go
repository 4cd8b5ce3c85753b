package entity

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
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
	// Numbers past float64 must survive as their text (the old oracle
	// decoded into float64 and failed here, on itself).
	f.Add([]byte(`{"a":1E700,"b":{"c":-1e-700}}`), []byte(`{"b":{"d":1E700},"e":[1E700]}`))
	// The deep and wide classes of issue 12 (testdata has nesting past the
	// service's limit); kept small, because the fuzzer minimises large
	// inputs for a long time. TestMergePatchLinearWork merges 9,999 deep.
	f.Add(deepDoc(40, `{"old":1}`), deepDoc(40, `{"new":1E700,"s":null}`))
	f.Add(wideTarget(4), widePatch(4))
	f.Fuzz(func(t *testing.T, target, patch []byte) {
		if !json.Valid(target) || !json.Valid(patch) {
			// Stored documents are JSON, but a broken one must still
			// end in an error or some output, never a panic.
			_, _ = MergePatch(target, patch)
			return
		}
		out, err := MergePatch(target, patch)
		if err != nil {
			t.Fatalf("MergePatch(%s, %s): %v", target, patch, err)
		}
		if !json.Valid(out) {
			t.Fatalf("MergePatch(%s, %s) = %s: not JSON", target, patch, out)
		}
		// The result is what RFC 7396's algorithm gives on the decoded
		// documents, numbers compared as their text.
		tv, terr := decodeExact(target)
		pv, perr := decodeExact(patch)
		ov, oerr := decodeExact(out)
		if terr != nil || perr != nil {
			return // past the standard decoder's own limits (depth 10000)
		}
		if oerr != nil {
			t.Fatalf("MergePatch(%s, %s) = %s: %v", target, patch, out, oerr)
		}
		if want := referenceMerge(tv, pv); !reflect.DeepEqual(ov, want) {
			t.Fatalf("MergePatch(%s, %s) = %s, want %v", target, patch, out, want)
		}
		// Applying the same patch again changes nothing, to the byte.
		again, err := MergePatch(out, patch)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %s then %s (%v)", out, again, err)
		}
	})
}

// decodeExact decodes JSON with numbers kept as their text (json.Number),
// so comparing two decodings compares numbers exactly.
func decodeExact(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// referenceMerge is RFC 7396 section 2's MergePatch on decoded values.
func referenceMerge(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = referenceMerge(t[k], v)
		}
	}
	return t
}

// jsonEqual compares two JSON texts exactly: same values, numbers as text.
func jsonEqual(a, b []byte) bool {
	x, errX := decodeExact(a)
	y, errY := decodeExact(b)
	return errX == nil && errY == nil && reflect.DeepEqual(x, y)
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
	if st, _, _ := wf.OnCreate(context.Background(), "t", nil, nil); st != StateCreated {
		t.Errorf("create lands in %s", st)
	}
	for _, c := range []struct{ from, tr, to string }{{"CREATED", "", "CREATED"}, {"CREATED", "UPDATE", "CREATED"}, {"CREATED", "DELETE", "DELETED"}, {"DELETED", "", "DELETED"}} {
		if st, _, err := wf.OnUpdate(context.Background(), "t", nil, c.from, c.tr, nil); err != nil || st != c.to {
			t.Errorf("%s -%s-> %s %v, want %s", c.from, c.tr, st, err, c.to)
		}
	}
	if _, _, err := wf.OnUpdate(context.Background(), "t", nil, "DELETED", "UPDATE", nil); err == nil || !strings.Contains(err.Error(), "TRANSITION_NOT_FOUND") {
		t.Errorf("transition out of a terminal state: %v", err)
	}
}
