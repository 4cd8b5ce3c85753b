package workflow

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	json "github.com/goccy/go-json"
)

// fakeEvaluator is a test double for the predicate package: it understands
// just enough of the condition language for engine tests — simple EQUALS
// on a top-level field ("$.k"), lifecycle EQUALS on state, AND/OR groups
// and nested function conditions (through the engine's callback).
type fakeEvaluator struct{ calls int }

type fakeCond struct {
	Type       string            `json:"type"`
	JSONPath   string            `json:"jsonPath"`
	Field      string            `json:"field"`
	Operator   string            `json:"operatorType"`
	Value      json.RawMessage   `json:"value"`
	GroupOp    string            `json:"operator"`
	Conditions []json.RawMessage `json:"conditions"`
}

func (f *fakeEvaluator) Eval(ctx context.Context, raw json.RawMessage, data []byte, meta Meta, fn FunctionCaller) (bool, error) {
	f.calls++
	var c fakeCond
	if err := json.Unmarshal(raw, &c); err != nil {
		return false, err
	}
	switch c.Type {
	case "simple":
		if c.Operator != "EQUALS" || len(c.JSONPath) < 3 {
			return false, fmt.Errorf("unsupported operator %q", c.Operator)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(data, &doc); err != nil {
			return false, err
		}
		v, ok := doc[c.JSONPath[2:]]
		return ok && bytes.Equal(v, c.Value), nil
	case "lifecycle":
		var want string
		_ = json.Unmarshal(c.Value, &want)
		return c.Field == "state" && meta.State == want, nil
	case "group":
		for _, sub := range c.Conditions {
			ok, err := f.Eval(ctx, sub, data, meta, fn)
			if err != nil {
				return false, err
			}
			if c.GroupOp == "OR" && ok {
				return true, nil
			}
			if c.GroupOp == "AND" && !ok {
				return false, nil
			}
		}
		return c.GroupOp == "AND", nil
	case "function":
		return fn(ctx, raw)
	}
	return false, errors.New("unknown condition type " + c.Type)
}

func eq(field, value string) string {
	return `{"type":"simple","jsonPath":"$.` + field + `","operatorType":"EQUALS","value":` + value + `}`
}
