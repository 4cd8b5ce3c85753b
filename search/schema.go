package search

import (
	"fmt"
	"strings"

	json "github.com/goccy/go-json"

	"svc/predicate"
)

// schemaOf reads a stored SIMPLE_VIEW model into the predicate's leaf map.
// The model is a map of nodes ("$", "$.items[*]", …); an object node maps
// relative keys (".a.b", ".tags[*]") to type descriptors ("INTEGER",
// "[INTEGER, STRING]", "(STRING x 2)") and structural keys ("#…") to
// shapes; a string node describes the elements of a nested array.
func schemaOf(simpleView []byte) (*predicate.FieldMap, error) {
	leaves := map[string]predicate.TypeSet{}
	if len(simpleView) == 0 {
		return predicate.NewFieldMap(leaves), nil
	}
	var nodes map[string]json.RawMessage
	if err := json.Unmarshal(simpleView, &nodes); err != nil {
		return nil, fmt.Errorf("search: reading stored model: %w", err)
	}
	for node, raw := range nodes {
		if !strings.HasPrefix(node, "$") {
			continue // not a node of the model
		}
		if len(raw) > 0 && raw[0] == '"' {
			var d string
			if err := json.Unmarshal(raw, &d); err != nil {
				return nil, fmt.Errorf("search: reading stored model node %s: %w", node, err)
			}
			addLeaf(leaves, node+"[*]", d)
			continue
		}
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, fmt.Errorf("search: reading stored model node %s: %w", node, err)
		}
		for k, v := range entries {
			if strings.HasPrefix(k, "#") || len(v) == 0 || v[0] != '"' {
				continue
			}
			var d string
			if err := json.Unmarshal(v, &d); err != nil {
				return nil, fmt.Errorf("search: reading stored model node %s: %w", node, err)
			}
			addLeaf(leaves, node+k, d)
		}
	}
	return predicate.NewFieldMap(leaves), nil
}

// addLeaf records path with the types of descriptor d. An array
// descriptor "(T x n)" types the elements; ARRAY_ELEMENT and OBJECT mean
// the elements are described by a node of their own.
func addLeaf(leaves map[string]predicate.TypeSet, path, d string) {
	if strings.HasPrefix(d, "(") && strings.HasSuffix(d, ")") {
		d = d[1 : len(d)-1]
		if i := strings.LastIndex(d, " x "); i >= 0 {
			d = d[:i]
		}
	}
	d = strings.TrimSuffix(strings.TrimPrefix(d, "["), "]")
	var ts []predicate.DataType
	for _, name := range strings.Split(d, ",") {
		if t, ok := predicate.ParseDataType(strings.TrimSpace(name)); ok {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return
	}
	leaves[path] |= predicate.Types(ts...)
}
