// Package workflow holds workflow definitions (the import format, its schema
// versions and validation, the import modes and export) and the engine that
// runs an entity through a workflow: workflow selection, named and automated
// transitions, criteria and processors.
//
// The package does no storage I/O. Definitions come in and go out as the
// JSON bytes a model stores (storage.Model.Workflows); the engine works on an
// in-memory entity and returns the audit events of every step so the caller
// writes them in the transaction that writes the entity. Criteria are
// evaluated through CriteriaEvaluator and processors are dispatched through
// ProcessorDispatcher, so the condition language and the compute-member
// transport plug in from their own packages.
package workflow
