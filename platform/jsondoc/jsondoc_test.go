package jsondoc

import (
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"

	"svc/bench/orderdoc"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		kind Kind // 0: accepted
		path string
		key  string
	}{
		{"object", `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, 0, "", ""},
		{"scalar", ` "x" `, 0, "", ""},
		{"numbers", `[0,-0,1.5,-2e10,3E+2,4e-1,12345678901234567890]`, 0, "", ""},
		{"escapes", `{"s":"\" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00"}`, 0, "", ""},
		{"utf8", `{"s":"héllo 世界 😀","é":1}`, 0, "", ""},
		{"same name in siblings", `{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}]}`, 0, "", ""},
		{"empty containers", `{"a":{},"b":[],"c":[{}]}`, 0, "", ""},

		{"duplicate", `{"name":"first","name":"second"}`, DuplicateKey, "$.name", "name"},
		{"duplicate nested", `{"a":{"b":[1,{"c":1,"d":2,"c":3}]}}`, DuplicateKey, "$.a.b[1].c", "c"},
		{"duplicate by escape", `{"a":1,"\u0061":2}`, DuplicateKey, "$.a", "a"},
		{"duplicate escaped both", `{"\u00e9":1,"\u00E9":2}`, DuplicateKey, "$[\"é\"]", "é"},
		{"duplicate odd name", `{"a b":1,"a b":2}`, DuplicateKey, `$["a b"]`, "a b"},
		{"duplicate empty name", `{"":1,"":2}`, DuplicateKey, `$[""]`, ""},

		{"NUL in value", `{"a":{"b":"x\u0000y"}}`, Text, "$.a.b", ""},
		{"NUL in name", `{"a":{"x\u0000":1}}`, Text, "$.a", ""},
		{"NUL in array", `["ok",["\u0000"]]`, Text, "$[1][0]", ""},
		{"lone high surrogate", `{"a":"\ud800"}`, Text, "$.a", ""},
		{"high surrogate then text", `{"a":"\ud800x"}`, Text, "$.a", ""},
		{"high then high", `{"a":"\ud800\ud800"}`, Text, "$.a", ""},
		{"lone low surrogate", `{"a":"\udc00"}`, Text, "$.a", ""},
		{"high at end", `{"a":"\uD800`, Text, "$.a", ""},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", Text, "$.a", ""},
		{"encoded surrogate", "{\"a\":\"\xed\xa0\x80\"}", Text, "$.a", ""},
		{"overlong", "{\"a\":\"\xc0\xaf\"}", Text, "$.a", ""},
		{"truncated rune", "{\"a\":\"\xe4\xb8\"}", Text, "$.a", ""},
		{"invalid UTF-8 in name", "{\"\xff\":1}", Text, "$", ""},

		{"empty", ``, Syntax, "", ""},
		{"trailing", `{} {}`, Syntax, "", ""},
		{"raw control", "{\"a\":\"\x01\"}", Syntax, "", ""},
		{"raw NUL byte", "{\"a\":\"\x00\"}", Syntax, "", ""},
		{"bad escape", `{"a":"\x"}`, Syntax, "", ""},
		{"short u", `{"a":"\u12"}`, Syntax, "", ""},
		{"leading zero", `[01]`, Syntax, "", ""},
		{"bad fraction", `[1.]`, Syntax, "", ""},
		{"bad exponent", `[1e]`, Syntax, "", ""},
		{"trailing comma", `[1,]`, Syntax, "", ""},
		{"object trailing comma", `{"a":1,}`, Syntax, "", ""},
		{"missing colon", `{"a" 1}`, Syntax, "", ""},
		{"unquoted name", `{a:1}`, Syntax, "", ""},
		{"mismatched", `{"a":[1}`, Syntax, "", ""},
		{"unterminated", `{"a":"b`, Syntax, "", ""},
		{"open", `[`, Syntax, "", ""},
		{"literal", `[tru]`, Syntax, "", ""},
		{"bom", "\xef\xbb\xbf{}", Syntax, "", ""},
		{"too deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), TooDeep, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.doc))
			if tc.kind == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("accepted, want kind %d", tc.kind)
			}
			if e.Kind != tc.kind {
				t.Fatalf("kind %d (%v), want %d", e.Kind, e, tc.kind)
			}
			if tc.kind != Syntax && tc.kind != TooDeep && e.Path != tc.path {
				t.Fatalf("path %q, want %q (%v)", e.Path, tc.path, e)
			}
			if e.Key != tc.key {
				t.Fatalf("key %q, want %q", e.Key, tc.key)
			}
		})
	}
}

// TestCheckDepthLimit: exactly MaxDepth levels are accepted.
func TestCheckDepthLimit(t *testing.T) {
	doc := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if err := Check([]byte(doc)); err != nil {
		t.Fatal(err)
	}
}

// TestCheckLargeObject: an object past linearKeys switches to its hash
// index and still finds a duplicate, early or late, and the index is
// released for the next object.
func TestCheckLargeObject(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"big":{`)
	for i := 0; i < 5000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + itoa(i) + `":` + itoa(i))
	}
	base := b.String()
	if err := Check([]byte(base + `},"big2":{"k1":1}}`)); err != nil {
		t.Fatal(err)
	}
	for _, dup := range []string{"k0", "k17", "k4999", "\\u006b3"} {
		err := Check([]byte(base + `,"` + dup + `":1}}`))
		var e *Error
		if !errors.As(err, &e) || e.Kind != DuplicateKey {
			t.Fatalf("%s: %v", dup, err)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestCheckAgreesWithEncodingJSON: on documents without the I-JSON faults
// the checker accepts exactly what encoding/json accepts.
func TestCheckAgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range []string{`{}`, `[]`, `1`, `-`, `"a`, `{"a":}`, `[1 2]`, `{"a":1}}`, `nul`, ` [ 1 , 2 ] `, `1.5e+3`, `-01`, `"\u00zz"`, `{"a":[{"b":{}}]}`} {
		got := Check([]byte(doc)) == nil
		if want := json.Valid([]byte(doc)); got != want {
			t.Errorf("%q: Check %v, encoding/json %v", doc, got, want)
		}
	}
}

func TestValidText(t *testing.T) {
	for s, want := range map[string]bool{"": true, "order": true, "héllo": true, "a\x00b": false, "\xff": false, "é\x00": false, "\xed\xa0\x80": false} {
		if ValidText(s) != want || ValidTextBytes([]byte(s)) != want {
			t.Errorf("%q: want %v", s, want)
		}
		if (TextFault(s) == "") != want {
			t.Errorf("%q: fault %q", s, TextFault(s))
		}
	}
}

// TestCheckAllocations: a typical document costs no allocation.
func TestCheckAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	doc := orderdoc.Append(nil, 7)
	Check(doc) // warm the pool
	if n := testing.AllocsPerRun(100, func() {
		if err := Check(doc); err != nil {
			t.Fatal(err)
		}
	}); n > 0 {
		t.Fatalf("%v allocations per check", n)
	}
}

// cpuNs reports CPU nanoseconds per op of this process: the box is shared,
// so wall-clock time mostly measures the scheduler.
func cpuNs(b *testing.B, run func()) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	start := cpu()
	n := 0
	for b.Loop() {
		run()
		n++
	}
	b.StopTimer()
	if used := cpu() - start; n > 0 && used > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(n), "cpu-ns/op")
	}
}

// BenchmarkCheckOrder: the check of a ~1 KB order document, the entity
// write path's per-document cost.
func BenchmarkCheckOrder(b *testing.B) {
	doc := orderdoc.Append(nil, 7)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	cpuNs(b, func() {
		if err := Check(doc); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkCheckWideObject: one object of 5,000 members (the hash index).
func BenchmarkCheckWideObject(b *testing.B) {
	var sb strings.Builder
	sb.WriteByte('{')
	for i := 0; i < 5000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`"field` + itoa(i) + `":` + itoa(i))
	}
	sb.WriteByte('}')
	doc := []byte(sb.String())
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	cpuNs(b, func() {
		if err := Check(doc); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkGoccyValidOrder is the check it replaces on the entity write
// path (github.com/goccy/go-json's Valid).
func BenchmarkGoccyValidOrder(b *testing.B) {
	doc := orderdoc.Append(nil, 7)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	cpuNs(b, func() {
		if !gojson.Valid(doc) {
			b.Fatal("invalid")
		}
	})
}
