// Package workflowtest holds test helpers for the packages that take a
// parsed workflow import (model, entity, scheduler).
package workflowtest

import (
	"testing"

	"svc/workflow"
)

// ParseImport decodes a workflow import body as the HTTP adapter does
// before it calls model.Service.ImportWorkflows, failing the test on an
// error.
func ParseImport(tb testing.TB, body string) *workflow.ImportRequest {
	tb.Helper()
	req, err := workflow.ParseImport([]byte(body))
	if err != nil {
		tb.Fatalf("workflow import body: %v", err)
	}
	return req
}
