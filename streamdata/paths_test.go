package streamdata

import (
	"reflect"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// TestResolvePathForms: every accepted form of a column path resolves to the
// lifecycle field or the data path it names; paths that cannot be served
// are INVALID_FIELD_PATH naming why.
func TestResolvePathForms(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in         string
		hops       int
		meta, path string
		many       bool
		err        string // substring of the message; "" = resolves
	}{
		{in: "state", meta: "state", path: "state"},
		{in: "id", meta: "id", path: "id"},
		{in: "previousTransition", meta: "previousTransition", path: "transitionForLatestSave"},
		{in: "entityModelName", meta: "entityModelName", path: ""},
		{in: "state@com#cyoda#X", meta: "state", path: "state"},
		{in: "a.b", path: "$.a.b"},
		{in: "$.a.b", path: "$.a.b"},
		{in: ".a", path: "$.a"},
		{in: "a[*].b", path: "$.a[*].b", many: true},
		{in: "$.a.[*]", path: "$.a[*]", many: true},
		{in: "$.['k'].x", path: "$.k.x"},
		{in: "['k']", path: "$.k"},
		{in: "a@com#x#Y.b", path: "$.a.b"},
		{in: "members.[0]@com#cyoda#NodeInfo.value@com#cyoda#Maps.strings.[$.workflow_name]", path: "$.workflow_name"},
		{in: "values.strings.[$.a[*].b]", path: "$.a[*].b", many: true},
		{in: "a.b", hops: 1, path: "$.a.b"},
		{in: "a.b", hops: 2, err: "follows 2 references"},
		{in: "", err: "it is empty"},
		{in: "$", err: "whole document"},
		{in: "a..b", err: `segment ""`},
		{in: "a.b'c", err: "is not a member name"},
		{in: "a.[0]", err: "is not a member name"},
		{in: strings.Repeat("a", 1025), err: "longer than 1024"},
	}
	for _, c := range cases {
		r, err := resolvePath(c.in, c.hops)
		if c.err != "" {
			e, ok := apierr.As(err)
			if !ok || e.Code.String() != "INVALID_FIELD_PATH" || !strings.Contains(err.Error(), c.err) {
				t.Errorf("resolvePath(%.40q): %v, want INVALID_FIELD_PATH with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("resolvePath(%q): %v", c.in, err)
			continue
		}
		if r.meta != c.meta || r.path != c.path || r.many() != c.many {
			t.Errorf("resolvePath(%q) = meta %q path %q many %v, want %q %q %v", c.in, r.meta, r.path, r.many(), c.meta, c.path, c.many)
		}
	}
}

// TestRefValue: a resolved path reads a scalar, or every value under a
// [*] hop (absent and null values left out), from a decoded document.
func TestRefValue(t *testing.T) {
	t.Parallel()
	var doc any
	if err := json.Unmarshal([]byte(`{"a":{"b":1,"n":null},"l":[{"b":"x"},{"c":2},{"b":null},{"b":"y"}],"m":[[1,2],[3]],"s":"str"}`), &doc); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		want any
	}{
		{"a.b", 1.0},
		{"a", map[string]any{"b": 1.0, "n": nil}},
		{"a.n", nil},
		{"a.zz", nil},
		{"s.x", nil},
		{"l[*].b", []any{"x", "y"}},
		{"l[*].zz", nil},
		{"s[*]", nil},
		{"m[*].[*]", []any{1.0, 2.0, 3.0}},
	}
	for _, c := range cases {
		r, err := resolvePath(c.path, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if got := r.value(doc); !reflect.DeepEqual(got, c.want) {
			t.Errorf("value(%s) = %#v, want %#v", c.path, got, c.want)
		}
	}
}
