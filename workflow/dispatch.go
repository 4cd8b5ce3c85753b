package workflow

import (
	"context"
	"time"

	json "github.com/goccy/go-json"
)

// Meta is the entity metadata criteria and compute members see.
type Meta struct {
	ID                      string
	ModelName               string
	ModelVersion            int
	State                   string
	CreationDate            time.Time
	LastUpdateTime          time.Time
	TransactionID           string
	TransitionForLatestSave string
}

// CriteriaEvaluator evaluates a condition (the predicate language) against
// an entity's JSON data and metadata. The predicate package implements it.
// fn evaluates a function condition nested inside the condition by calling
// a compute member; a top-level function criterion never reaches Eval.
type CriteriaEvaluator interface {
	Eval(ctx context.Context, condition json.RawMessage, data []byte, meta Meta, fn FunctionCaller) (bool, error)
}

// FunctionCaller evaluates one function condition (the whole
// {"type":"function",...} object) on a compute member.
type FunctionCaller func(ctx context.Context, condition json.RawMessage) (bool, error)

// Auth is the originating principal, forwarded to compute members as the
// authtype, authid and authclaims attributes.
type Auth struct {
	Kind  string // user, service or system
	ID    string
	Roles []string
}

// Call is what every dispatch to a compute member carries.
type Call struct {
	Tenant        string
	Auth          Auth
	TxToken       string // empty when there is no transaction
	TransactionID string
	Meta          Meta
	// Data is the entity's JSON; nil when attachEntity is false.
	Data       []byte
	Workflow   string
	Transition string
	StateFrom  string
	StateTo    string
	// Tags are the required calculationNodesTags, split and trimmed; empty
	// means any member of the tenant. TagsCSV is the declared string.
	Tags       []string
	TagsCSV    string
	Timeout    time.Duration
	Parameters string // config.context, forwarded verbatim
}

// ProcessorCall asks a member to run a processor.
type ProcessorCall struct {
	Call
	Processor     string
	ExecutionMode string
}

// CriteriaCall asks a member to evaluate a function criterion.
type CriteriaCall struct {
	Call
	Criteria string
	Target   string // WORKFLOW or TRANSITION
}

// MemberError is the error object of a member's response.
type MemberError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable,omitempty"`
}

// ProcessorResult is a member's processor response.
type ProcessorResult struct {
	Success bool
	// Data replaces the entity's data when it is neither absent nor null.
	Data     json.RawMessage
	Error    *MemberError
	Warnings []string
}

// CriteriaResult is a member's criteria response.
type CriteriaResult struct {
	Success  bool
	Matches  bool
	Reason   string
	Error    *MemberError
	Warnings []string
}

// ProcessorDispatcher runs processors and function criteria. The compute
// package implements it over gRPC members; LocalDispatcher runs Go
// functions in process. Dispatch failures are returned as catalogue errors
// (NoMemberForTag, DispatchTimeout, MemberDisconnected) which the engine
// passes through; any other error fails the workflow.
type ProcessorDispatcher interface {
	DispatchProcessor(ctx context.Context, call *ProcessorCall) (*ProcessorResult, error)
	DispatchCriteria(ctx context.Context, call *CriteriaCall) (*CriteriaResult, error)
}

// Segmenter commits the entity in its pre-callout state before a
// COMMIT_BEFORE_DISPATCH processor is called (TX_pre) and begins the
// transaction the rest of the run continues in (TX_post). It returns the
// transaction token to send to the member: TX_post's when StartNewTx,
// else empty (the member runs outside any transaction).
type Segmenter interface {
	CommitBeforeDispatch(ctx context.Context, s *Segment) (txToken string, err error)
}

// Segment is what TX_pre commits.
type Segment struct {
	// Entity is the entity as it is before the callout: the source state
	// of the transition and the data earlier processors left.
	Entity *Entity
	// Events are the run's events not yet committed; they are written in
	// TX_pre and are no longer part of the Outcome afterwards.
	Events     []Event
	StartNewTx bool
}

// SavepointRunner runs fn inside a savepoint of the current transaction,
// rolling the savepoint back when fn fails. ASYNC_NEW_TX processors run in
// one so their callbacks' writes vanish on failure.
type SavepointRunner interface {
	WithSavepoint(ctx context.Context, fn func(ctx context.Context) error) error
}
