package scheduler

import (
	"testing"

	"svc/workflow"
)

// parseWorkflows decodes a workflow import body as the HTTP adapter does
// before it calls model.Service.ImportWorkflows.
func parseWorkflows(tb testing.TB, body string) *workflow.ImportRequest {
	tb.Helper()
	req, err := workflow.ParseImport([]byte(body))
	if err != nil {
		tb.Fatalf("workflow import body: %v", err)
	}
	return req
}
