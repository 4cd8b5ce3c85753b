package main

import (
	"fmt"

	"github.com/valyala/fasthttp"
)

// Workflow scenario: entity creates through a 3-state automatic workflow
// with one criterion on model loadgenwf/1, to compare with "create".

const workflowModelPath = "/entity/JSON/loadgenwf/1"

const loadgenWorkflow = `{"importMode":"REPLACE","workflows":[{"version":"1.3","name":"loadgen","initialState":"NEW","states":{
  "NEW":{"transitions":[{"name":"check","next":"CHECKED","manual":false,"criterion":{"type":"simple","jsonPath":"$.active","operatorType":"EQUALS","value":true}}]},
  "CHECKED":{"transitions":[{"name":"finish","next":"DONE","manual":false}]},
  "DONE":{}}}]}`

func workflowSetup(c *fasthttp.Client, base string) error {
	for _, step := range []struct {
		method, path, body string
		ok                 func(int) bool
	}{
		{"POST", "/model/import/JSON/SAMPLE_DATA/loadgenwf/1", entityDoc(0, 0), func(s int) bool { return s == 200 || s == 409 }},
		{"PUT", "/model/loadgenwf/1/lock", "", func(s int) bool { return s == 200 || s == 409 }},
		// REPLACE makes a rerun against the same server idempotent.
		{"POST", "/model/loadgenwf/1/workflow/import", loadgenWorkflow, func(s int) bool { return s == 200 }},
	} {
		st, body, err := entityCall(c, step.method, base+step.path, []byte(step.body))
		if err != nil {
			return err
		}
		if !step.ok(st) {
			return fmt.Errorf("setup %s %s: %d %s", step.method, step.path, st, body)
		}
	}
	return nil
}

// workflowScenarios adds the scenarios of this file to scenarios.
func workflowScenarios(scenarios map[string]Scenario) {
	scenarios["create-workflow"] = Scenario{
		Describe: "POST {ctx}" + workflowModelPath + " (one ~1 KB entity per request through NEW -criterion-> CHECKED -> DONE)",
		Setup:    workflowSetup,
		Build: func(req *fasthttp.Request, base string, worker int, seq uint64) {
			req.SetRequestURI(base + workflowModelPath)
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			req.SetBodyString(entityDoc(worker, seq))
		},
		OK: func(s int) bool { return s == 200 },
	}
}
