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
//
// # Processor execution modes
//
// A write in svc is one storage.Tx: the entity service runs the engine on
// an in-memory entity, collecting the new state, data and audit events,
// and commits them together at the end. Nothing reaches storage before
// that commit, so "inside the transaction" means "in the buffer the
// commit will write".
//
//   - SYNC, ASYNC_SAME_TX (and an empty mode) call the member inline; the
//     returned data replaces the entity's data; a failure fails the run
//     and the caller discards the buffer (nothing is written).
//   - ASYNC_NEW_TX runs in a savepoint: the engine marks its buffer (its
//     events, warnings, the entity's state and data) before the call and,
//     when the processor fails (success:false, no member, timeout,
//     disconnect), turns the buffer back to the mark, records
//     STATE_PROCESS_RESULT success:false, logs a WARN and goes on with the
//     pipeline and the transition. The returned data is always discarded.
//     A member cannot add writes to svc's buffer today (no request joins
//     another's transaction), so the engine's own effects are all a
//     savepoint has to undo; Run.Savepoints lets a caller that does hold
//     more (a joined transaction) roll that back in the same step.
//   - COMMIT_BEFORE_DISPATCH segments the write (docs/decisions/0017-workflow-engine.md): the
//     Run.Segmenter commits the buffer so far, with the entity in its
//     pre-callout state (TX_pre, a compare-and-set against what the
//     caller read, 412 under If-Match); the member is called with no
//     transaction open; the run continues in TX_post, which the caller
//     commits with a compare-and-set against TX_pre's revision (409
//     CONFLICT when another writer got in between). A failure after TX_pre
//     leaves the entity durable in the pre-callout state. The answer and
//     every state-machine event of the run name the entry transaction
//     (TX_pre); each revision keeps the id of the transaction that wrote
//     it. Without a
//     Segmenter (several entities share the transaction, so committing
//     one early would break the others' all-or-nothing) the processor
//     fails with WORKFLOW_FAILED.
package workflow
