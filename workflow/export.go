package workflow

import (
	"fmt"

	"svc/platform/apierr"
)

// ExportResponse is the body of GET /model/{name}/{version}/workflow/export.
type ExportResponse struct {
	EntityName   string     `json:"entityName"`
	ModelVersion int        `json:"modelVersion"`
	Workflows    []Workflow `json:"workflows"`
}

// Export reads a model's stored workflows with every version stamped
// CurrentVersion, for the adapter to encode. A model without imported workflows answers 404
// WORKFLOW_NOT_FOUND; the default workflow is never exported.
func Export(stored []byte, entityName string, modelVersion int) (*ExportResponse, error) {
	ws, err := Decode(stored)
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 {
		return nil, apierr.New(apierr.WorkflowNotFound,
			fmt.Sprintf("no workflows imported for model %s version %d", entityName, modelVersion),
			apierr.P("entityName", entityName), apierr.P("entityVersion", modelVersion))
	}
	for i := range ws {
		ws[i].Version = CurrentVersion
	}
	return &ExportResponse{EntityName: entityName, ModelVersion: modelVersion, Workflows: ws}, nil
}
