package workflow

import (
	_ "embed"

	json "github.com/goccy/go-json"
)

//go:embed default_workflow.json
var defaultWorkflowJSON []byte

// DefaultWorkflowName names the built-in workflow.
const DefaultWorkflowName = "default"

// DefaultWorkflow returns the built-in workflow used when a model has no
// workflows or none matches at creation. It is never stored or exported.
// Each call returns a fresh copy.
func DefaultWorkflow() Workflow {
	var w Workflow
	if err := json.Unmarshal(defaultWorkflowJSON, &w); err != nil {
		panic("workflow: embedded default workflow: " + err.Error())
	}
	return w
}
