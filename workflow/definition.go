package workflow

import (
	json "github.com/goccy/go-json"
)

// Workflow is one workflow definition as imported, stored and exported.
// Optional parts are pointers or raw JSON so that absent, null and zero
// values round-trip exactly.
type Workflow struct {
	Version              string           `json:"version"`
	Name                 string           `json:"name"`
	Desc                 string           `json:"desc,omitempty"`
	InitialState         string           `json:"initialState"`
	Active               *bool            `json:"active,omitempty"`
	Criterion            json.RawMessage  `json:"criterion,omitempty"`
	CriterionAnnotations json.RawMessage  `json:"criterionAnnotations,omitempty"`
	Annotations          json.RawMessage  `json:"annotations,omitempty"`
	States               map[string]State `json:"states"`
}

// IsActive reports whether selection and state lookup see the workflow; an
// absent flag means active.
func (w *Workflow) IsActive() bool { return w.Active == nil || *w.Active }

// State is one state of a workflow with its outgoing transitions in
// declaration order (the order the cascade scans them).
type State struct {
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Transitions []Transition    `json:"transitions,omitempty"`
}

// Transition is an edge between two states.
type Transition struct {
	Name                 string          `json:"name"`
	Next                 string          `json:"next"`
	Manual               bool            `json:"manual"`
	Disabled             bool            `json:"disabled,omitempty"`
	Criterion            json.RawMessage `json:"criterion,omitempty"`
	CriterionAnnotations json.RawMessage `json:"criterionAnnotations,omitempty"`
	Annotations          json.RawMessage `json:"annotations,omitempty"`
	Processors           []Processor     `json:"processors,omitempty"`
	Schedule             *Schedule       `json:"schedule,omitempty"`
}

// Automated reports whether the cascade may fire the transition by itself.
func (t *Transition) Automated() bool { return !t.Manual && !t.Disabled && t.Schedule == nil }

// Processor is work run when its transition fires.
type Processor struct {
	Type          string          `json:"type"`
	Name          string          `json:"name"`
	ExecutionMode string          `json:"executionMode,omitempty"`
	Annotations   json.RawMessage `json:"annotations,omitempty"`
	// StartNewTxOnDispatch is accepted beside config too (where some client
	// documentation puts it); import moves it into Config (docs/decisions/0016-workflow-definitions.md).
	StartNewTxOnDispatch *bool           `json:"startNewTxOnDispatch,omitempty"`
	Config               ProcessorConfig `json:"config"`
}

// ProcessorConfig is the externalized processor's dispatch configuration.
type ProcessorConfig struct {
	// AttachEntity defaults to true at import and is always exported, so an
	// explicit false survives export and re-import.
	AttachEntity         *bool  `json:"attachEntity,omitempty"`
	CalculationNodesTags string `json:"calculationNodesTags,omitempty"`
	ResponseTimeoutMs    int64  `json:"responseTimeoutMs,omitempty"`
	RetryPolicy          string `json:"retryPolicy,omitempty"`
	Context              string `json:"context,omitempty"`
	StartNewTxOnDispatch bool   `json:"startNewTxOnDispatch,omitempty"`
	AsyncResult          *bool  `json:"asyncResult,omitempty"`
	// CrossoverToAsyncMs is rejected when set; kept raw so any JSON value
	// reaches validation instead of failing the decode.
	CrossoverToAsyncMs json.RawMessage `json:"crossoverToAsyncMs,omitempty"`
	// Idempotent arrived with schema 1.4; accepted and round-tripped.
	Idempotent *bool `json:"idempotent,omitempty"`
}

// Schedule marks a transition as scheduled: it fires delayMs after the
// entity settles in the source state, or when a compute function says.
type Schedule struct {
	DelayMs   int64             `json:"delayMs,omitempty"`
	TimeoutMs *int64            `json:"timeoutMs,omitempty"`
	Function  *ScheduleFunction `json:"function,omitempty"`
}

// ScheduleFunction asks a compute member for the fire time.
type ScheduleFunction struct {
	Name                 string `json:"name"`
	ResultKind           string `json:"resultKind"`
	CalculationNodesTags string `json:"calculationNodesTags"`
	AttachEntity         *bool  `json:"attachEntity,omitempty"`
	Context              string `json:"context,omitempty"`
	ResponseTimeoutMs    int64  `json:"responseTimeoutMs,omitempty"`
	// RetryPolicy arrived with schema 1.5; accepted and round-tripped.
	RetryPolicy string `json:"retryPolicy,omitempty"`
}

// ImportRequest is the body of POST /model/{name}/{version}/workflow/import.
type ImportRequest struct {
	ImportMode  string     `json:"importMode"`
	AllowCycles bool       `json:"allowCycles"`
	Workflows   []Workflow `json:"workflows"`
}

// Import modes (case-insensitive on the wire).
const (
	ModeMerge    = "MERGE"
	ModeReplace  = "REPLACE"
	ModeActivate = "ACTIVATE"
)

// Processor execution modes.
const (
	ModeSync                 = "SYNC"
	ModeAsyncSameTx          = "ASYNC_SAME_TX"
	ModeAsyncNewTx           = "ASYNC_NEW_TX"
	ModeCommitBeforeDispatch = "COMMIT_BEFORE_DISPATCH"
)

// Limits of the definition format.
const (
	MaxIdentifierLen  = 256
	MaxAnnotationSize = 64 << 10
	MaxImportBytes    = 10 << 20
	// DefaultResponseTimeoutMs applies when a processor or function gives 0.
	DefaultResponseTimeoutMs = 30000
)
