package search

import (
	"strings"
	"testing"

	"svc/platform/apierr"
	"svc/predicate"
)

// FuzzParseSort: any sort value list is either refused with
// INVALID_FIELD_PATH or yields keys that the schema check can take, and
// nothing panics.
func FuzzParseSort(f *testing.F) {
	for _, s := range []string{"price:desc", "$.a.b", "@creationDate:desc", "price:DESC", "a..b", "@foo", "x:", ":", "$.", "a\nb:asc"} {
		f.Add(s, "other")
	}
	fm := predicate.NewFieldMap(map[string]predicate.TypeSet{"$.price": predicate.Types(predicate.TypeDouble), "$.a.b": predicate.Types(predicate.TypeString)})
	f.Fuzz(func(t *testing.T, a, b string) {
		keys, err := parseSort([]string{a, b}, 3)
		if err != nil {
			if e, ok := apierr.As(err); !ok || e.Code.String() != "INVALID_FIELD_PATH" {
				t.Fatalf("error %v is not INVALID_FIELD_PATH", err)
			}
			return
		}
		if len(keys) != 2 {
			t.Fatalf("%d keys for 2 values", len(keys))
		}
		if err := checkSort(keys, fm); err != nil {
			if e, ok := apierr.As(err); !ok || e.Code.String() != "INVALID_FIELD_PATH" {
				t.Fatalf("schema error %v is not INVALID_FIELD_PATH", err)
			}
		}
	})
}

// FuzzSchemaOf: a stored model of any shape reads into a field map or an
// error, never a panic; every leaf it reports starts with $.
func FuzzSchemaOf(f *testing.F) {
	for _, s := range []string{
		`{"$":{".m[*]":"(ARRAY_ELEMENT x 2)",".name":"STRING",".poly":"[INTEGER, STRING]",".tags[*]":"(STRING x 2)","#.laureates":"OBJECT"},"$.laureates[*]":{".firstname":"STRING","#":"ARRAY_ELEMENT"},"$.m[*]":"(BYTE x 2)"}`,
		`{}`, `{"$":"x"}`, `{"$":{".a":"([INTEGER, NULL] x 3)"}}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fm, err := schemaOf(b)
		if err != nil {
			return
		}
		for _, p := range fm.Paths() {
			if !strings.HasPrefix(p, "$") {
				t.Fatalf("leaf %q", p)
			}
		}
	})
}
