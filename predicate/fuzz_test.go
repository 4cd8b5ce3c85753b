package predicate

import (
	stdjson "encoding/json"
	"strings"
	"testing"

	"github.com/buger/jsonparser"

	"svc/platform/apierr"
)

var fuzzSeeds = []string{
	`{"type":"simple","jsonPath":"$.price","operatorType":"EQUALS","value":12}`,
	`{"type":"simple","jsonPath":"$.price","operatorType":"BETWEEN","value":[1,"2"]}`,
	`{"type":"simple","jsonPath":"$.name","operatorType":"LIKE","value":"a\\%_%"}`,
	`{"type":"simple","jsonPath":"$.name","operatorType":"MATCHES_PATTERN","value":"(a|b)*c"}`,
	`{"type":"simple","jsonPath":"$.laureates[*].first","operatorType":"INOT_EQUAL","value":"john"}`,
	`{"type":"simple","jsonPath":"$.tags[1]","operatorType":"IS_NULL"}`,
	`{"type":"lifecycle","field":"creationDate","operatorType":"GREATER_THAN","value":"2024-01-01T00:00:00+02:00"}`,
	`{"type":"group","operator":"NOT","conditions":[{"type":"group","operator":"OR","conditions":[]}]}`,
	`{"type":"array","jsonPath":"$.tags","values":["x",null,1]}`,
	`{"type":"function","function":{"name":"f","config":{"attachEntity":true}}}`,
	`{"type":"simple","jsonPath":"$.day","operator":"LESS_OR_EQUAL","value":"2024-09"}`,
	`{"type":"simple","jsonPath":"$.amount","operatorType":"GREATER_OR_EQUAL","value":1e-99999999999}`,
}

// FuzzParse: any input either compiles or fails with an *apierr.Error,
// never a panic; what compiles renders SQL.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range []Schema{testSchema, nil} {
			c, err := Compile(data, s)
			if err != nil {
				if _, ok := apierr.As(err); !ok {
					t.Fatalf("non-API error %T: %v", err, err)
				}
				continue
			}
			b := &SQLBuilder{Cols: testCols}
			if _, _, err := c.SQL(b); err != nil {
				t.Fatalf("SQL: %v", err)
			}
		}
	})
}

// FuzzMatch evaluates conditions against arbitrary documents: no panic, and
// NOT is exactly the negation.
func FuzzMatch(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), []byte(corpus["a"].doc))
		f.Add([]byte(s), []byte(corpus["d"].doc))
	}
	f.Add([]byte(fuzzSeeds[0]), []byte(`{"price":1e99999999999999999999}`))
	f.Add([]byte(fuzzSeeds[4]), []byte(`{"laureates":[{"first":"a"},[`))
	f.Fuzz(func(t *testing.T, cond, doc []byte) {
		c, err := Compile(cond, nil)
		if err != nil || c.HasFunctions() {
			return
		}
		got := c.Match(doc, nil)
		if c.MatchDoc(NewDoc(doc), nil) != got {
			t.Fatalf("MatchDoc differs from Match (%v)", got)
		}
		neg, err := Compile([]byte(`{"type":"group","operator":"NOT","conditions":[`+string(cond)+`]}`), nil)
		if err != nil {
			return // nesting one level deeper can exceed MaxDepth
		}
		if neg.Match(doc, nil) == got {
			t.Fatalf("NOT does not negate: %v", got)
		}
	})
}

// FuzzLookup checks the raw-bytes scanner against buger/jsonparser on valid
// JSON (both take the first of duplicate keys) and for panics on anything.
func FuzzLookup(f *testing.F) {
	f.Add([]byte(corpus["a"].doc), "laureates", "first")
	f.Add([]byte(corpus["d"].doc), "name", "")
	f.Add([]byte(`{"a\u0062":{"c":[1,"x\"y",{"d":null}]}}`), "ab", "c")
	f.Add([]byte(`{"a":[[1],[2,3]]}`), "a", "[1]")
	f.Fuzz(func(t *testing.T, doc []byte, k1, k2 string) {
		keys := []string{k1}
		if k2 != "" {
			keys = append(keys, k2)
		}
		for _, k := range keys {
			if k == "" || strings.ContainsAny(k, "[]") && !validIndexKey(k) {
				return
			}
		}
		v, typ := lookup(doc, keys)
		if !stdjson.Valid(doc) {
			return
		}
		jv, jt, _, err := jsonparser.Get(doc, keys...)
		want := map[jsonparser.ValueType]vtype{jsonparser.String: vString, jsonparser.Number: vNumber,
			jsonparser.Object: vObject, jsonparser.Array: vArray, jsonparser.Boolean: vBool, jsonparser.Null: vNull}[jt]
		if err != nil {
			want = vAbsent
		}
		if typ != want || (want != vAbsent && string(v) != string(jv)) {
			t.Fatalf("lookup %q in %s: got %d %q, jsonparser %v %q", keys, doc, typ, v, jt, jv)
		}
	})
}

func validIndexKey(k string) bool {
	if len(k) < 3 || k[0] != '[' || k[len(k)-1] != ']' {
		return false
	}
	for _, c := range k[1 : len(k)-1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(k) < 8
}
