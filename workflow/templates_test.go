package workflow

import (
	"strings"
	"svc/platform/apierr"
	"testing"
)

// TestClientTemplateWorkflowShims (docs/decisions/0030-client-compatibility.md, docs/decisions/0016-workflow-definitions.md):
// workflow files as the client templates write them import: version
// "1.0" (JT-P, MCP) and "1.5" with the 0.9 fields config.idempotent and
// schedule.function.retryPolicy (JT-C), every retryPolicy alias of the
// Java template's docs, and criteria with the operator spellings the
// templates send (NOT_EQUALS, the _OR_EQUAL forms, IN, NOT_IN,
// current_state). A policy outside the aliases is still refused.
func TestClientTemplateWorkflowShims(t *testing.T) {
	wf := func(version, states string) string {
		return `{"version":"` + version + `","name":"w","initialState":"NEW","states":` + states + `}`
	}
	proc := func(cfg string) string {
		return `{"NEW":{"transitions":[{"name":"GO","next":"DONE","manual":true,"processors":[{"name":"p","executionMode":"SYNC","config":` + cfg + `}]}]},"DONE":{}}`
	}
	crit := func(c string) string {
		return `{"NEW":{"transitions":[{"name":"GO","next":"DONE","manual":false,"criterion":` + c + `}]},"DONE":{}}`
	}
	accepted := map[string][]byte{
		"version 1.0":        importBody("REPLACE", wf("1.0", `{"NEW":{"transitions":[{"name":"GO","next":"DONE","manual":true}]},"DONE":{}}`)),
		"version 1.5 fields": importBody("REPLACE", wf("1.5", proc(`{"attachEntity":true,"calculationNodesTags":"t","idempotent":true}`))),
		"1.5 schedule function retryPolicy": importBody("REPLACE", wf("1.5", `{"NEW":{"transitions":[{"name":"GO","next":"DONE","manual":false,
			"schedule":{"function":{"name":"f","resultKind":"Schedule","calculationNodesTags":"t","retryPolicy":"FIXED"}}}]},"DONE":{}}`)),
		"criterion spellings": importBody("REPLACE", wf("1.0", crit(`{"type":"group","operator":"AND","conditions":[
			{"type":"simple","jsonPath":"$.a","operatorType":"NOT_EQUALS","value":1},
			{"type":"simple","jsonPath":"$.a","operatorType":"GREATER_THAN_OR_EQUAL","value":1},
			{"type":"simple","jsonPath":"$.a","operatorType":"LESS_THAN_OR_EQUAL","value":9},
			{"type":"simple","jsonPath":"$.b","operatorType":"IN","value":["x","y"]},
			{"type":"simple","jsonPath":"$.b","operatorType":"NOT_IN","value":["z"]},
			{"type":"lifecycle","field":"current_state","operatorType":"EQUALS","value":"NEW"}]}`))),
	}
	for _, p := range []string{"EXPONENTIAL", "LINEAR", "EXPONENTIAL_BACKOFF", "LINEAR_BACKOFF", "FIXED", "NONE"} {
		accepted["retryPolicy "+p] = importBody("REPLACE", wf("1.0", proc(`{"retryPolicy":"`+p+`"}`)))
	}
	// Criteria are checked against the condition language, as the import
	// API does.
	check := func(body []byte) error {
		req, err := ParseImport(body)
		if err != nil {
			return err
		}
		_, err = Import(nil, req, NewPredicateCriteria(0))
		return err
	}
	for name, body := range accepted {
		t.Run(name, func(t *testing.T) {
			if err := check(body); err != nil {
				t.Fatalf("refused: %v\n%s", err, body)
			}
		})
	}
	wantCode(t, check(importBody("REPLACE", wf("1.0", proc(`{"retryPolicy":"RANDOM"}`)))), apierr.ValidationFailed.String(), "retryPolicy")
	err := check(importBody("REPLACE", wf("1.0", crit(`{"type":"simple","jsonPath":"$.b","operatorType":"IN","value":"x"}`))))
	if err == nil || !strings.Contains(err.Error(), "IN") {
		t.Fatalf("IN with a scalar value: %v", err)
	}
}
