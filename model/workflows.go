package model

import (
	"context"
	"log/slog"

	"svc/storage"
	"svc/workflow"
)

// Workflow import and export (docs/decisions/0016-workflow-definitions.md). A model's workflow
// set lives in storage.Model.Workflows as the JSON workflow.Import wrote;
// these operations only load, check and store it, in the caller's tenant.

// workflowChecker validates criteria at import with the predicate language
// (no model schema: criteria paths are lenient, docs/decisions/0017-workflow-engine.md).
var workflowChecker workflow.ConditionChecker = workflow.NewPredicateCriteria(0)

// ImportWorkflows applies a decoded workflow import to a model
// (docs/decisions/0016-workflow-definitions.md, in that order): the checks
// that need no model ran in workflow.ParseImport, which the adapter calls;
// then the model lookup (404 MODEL_NOT_FOUND), validation and the import
// mode, then the write, retried when a concurrent writer moved the model's
// revision on. A MERGE of nothing writes nothing. log receives the
// "workflow import applied" line.
func (s *Service) ImportWorkflows(ctx context.Context, tenant string, key storage.ModelKey, req *workflow.ImportRequest, log *slog.Logger) error {
	var res *workflow.ImportResult
	_, err := s.update(ctx, tenant, key, "importing workflows into", func(m *storage.Model) error {
		r, err := workflow.Import(m.Workflows, req, workflowChecker)
		if err != nil {
			return err
		}
		res = r
		if !r.Changed {
			return errUnchanged
		}
		m.Workflows = r.Stored
		return nil
	})
	if err != nil {
		return err
	}
	if log == nil {
		log = slog.Default()
	}
	res.Log(log, "tenant", tenant, "entityName", key.Name, "modelVersion", key.Version, "importMode", req.ImportMode)
	return nil
}

// ExportWorkflows reads a model's imported workflows (404 MODEL_NOT_FOUND
// for an unknown model, 404 WORKFLOW_NOT_FOUND when none were imported);
// the adapter encodes the result.
func (s *Service) ExportWorkflows(ctx context.Context, tenant string, key storage.ModelKey) (*workflow.ExportResponse, error) {
	m, err := s.get(ctx, tenant, key)
	if err != nil {
		return nil, err
	}
	return workflow.Export(m.Workflows, key.Name, key.Version)
}
