package apierr

import "google.golang.org/grpc/codes"

// Code is one entry of the error catalogue: the code clients read in
// `properties.errorCode` (and as the prefix of `detail`), the HTTP status
// the API answers it with, the gRPC status a gRPC failure carrying it
// uses, whether it is retryable whatever the instance says, and its help
// topic. The catalogue is closed: a Code can only be one of the variables
// below (the field is unexported), so a code no client knows cannot be
// written anywhere, and the statuses live here and nowhere else
// (docs/decisions/0004-error-envelope.md).
//
// The zero Code reads as ServerError.
type Code struct{ e *entry }

type entry struct {
	name      string
	http      int
	grpc      codes.Code
	retryable bool
}

var catalogue []Code

func code(name string, http int, grpc codes.Code) Code {
	c := Code{&entry{name: name, http: http, grpc: grpc}}
	catalogue = append(catalogue, c)
	return c
}

func retryableCode(name string, http int, grpc codes.Code) Code {
	c := code(name, http, grpc)
	c.e.retryable = true
	return c
}

func (c Code) entry() *entry {
	if c.e == nil {
		return ServerError.e
	}
	return c.e
}

// String is the code as it appears on the wire.
func (c Code) String() string { return c.entry().name }

// HTTPStatus is the status the HTTP API answers the code with.
func (c Code) HTTPStatus() int { return c.entry().http }

// GRPCStatus is the status of a gRPC failure that carries the code.
func (c Code) GRPCStatus() codes.Code { return c.entry().grpc }

// Retryable reports whether every error of the code is retryable; an
// Error can also be retryable on its own (Error.Retryable).
func (c Code) Retryable() bool { return c.entry().retryable }

// Topic is the help topic that explains the code (help/topics/errors).
func (c Code) Topic() string { return "errors." + c.entry().name }

// Catalogue is every code, in the order of this file.
func Catalogue() []Code { return append([]Code(nil), catalogue...) }

// Lookup finds the code of a wire name (a code a peer node sent). Where
// several entries share a name (BAD_REQUEST at transport statuses), the
// first, the plain one, is returned.
func Lookup(name string) (Code, bool) {
	for _, c := range catalogue {
		if c.e.name == name {
			return c, true
		}
	}
	return Code{}, false
}

// The catalogue. Each code has a topic help/topics/errors/<CODE>.md whose
// STATUS section names the HTTP status given here
// (fast's TestCatalogueCodesHaveTopics); catalogue_test.go lists every
// entry with its statuses.
var (
	// Requests the API cannot read or refuses as written.
	BadRequest = code("BAD_REQUEST", 400, codes.InvalidArgument)
	// BAD_REQUEST at the statuses of the transport limits: the request was
	// not received in time, its headers or its body are over the limit.
	RequestTimeout     = code("BAD_REQUEST", 408, codes.DeadlineExceeded)
	PayloadTooLarge    = code("BAD_REQUEST", 413, codes.ResourceExhausted)
	HeadersTooLarge    = code("BAD_REQUEST", 431, codes.ResourceExhausted)
	MalformedRequest   = code("MALFORMED_REQUEST", 400, codes.InvalidArgument)
	MethodNotAllowed   = code("METHOD_NOT_ALLOWED", 405, codes.Unimplemented)
	UnsupportedMedia   = code("UNSUPPORTED_MEDIA_TYPE", 415, codes.InvalidArgument)
	UnstorableText     = code("UNSTORABLE_TEXT", 400, codes.InvalidArgument)
	PreconditionNeeded = code("PRECONDITION_REQUIRED", 428, codes.FailedPrecondition)
	TooManyEntities    = code("TOO_MANY_ENTITIES", 413, codes.ResourceExhausted)
	FeatureDisabled    = code("FEATURE_DISABLED", 404, codes.Unimplemented)

	// Authentication and authorization.
	Unauthorized = code("UNAUTHORIZED", 401, codes.Unauthenticated)
	Forbidden    = code("FORBIDDEN", 403, codes.PermissionDenied)

	// Things that are not there.
	NotFound              = code("NOT_FOUND", 404, codes.NotFound)
	EntityNotFound        = code("ENTITY_NOT_FOUND", 404, codes.NotFound)
	ModelNotFound         = code("MODEL_NOT_FOUND", 404, codes.NotFound)
	WorkflowNotFound      = code("WORKFLOW_NOT_FOUND", 404, codes.NotFound)
	SearchJobNotFound     = code("SEARCH_JOB_NOT_FOUND", 404, codes.NotFound)
	KeypairNotFound       = code("KEYPAIR_NOT_FOUND", 404, codes.NotFound)
	TrustedKeyNotFound    = code("TRUSTED_KEY_NOT_FOUND", 404, codes.NotFound)
	M2MClientNotFound     = code("M2M_CLIENT_NOT_FOUND", 404, codes.NotFound)
	OIDCProviderNotFound  = code("OIDC_PROVIDER_NOT_FOUND", 404, codes.NotFound)
	HelpTopicNotFound     = code("HELP_TOPIC_NOT_FOUND", 404, codes.NotFound)
	TransactionNotFound   = code("TRANSACTION_NOT_FOUND", 404, codes.NotFound)
	TransactionExpired    = code("TRANSACTION_EXPIRED", 410, codes.FailedPrecondition)
	TransitionNotFound    = code("TRANSITION_NOT_FOUND", 400, codes.InvalidArgument)
	ConditionTypeMismatch = code("CONDITION_TYPE_MISMATCH", 400, codes.InvalidArgument)

	// Conflicts with the state of the data.
	Conflict                  = retryableCode("CONFLICT", 409, codes.Aborted)
	UniqueViolation           = code("UNIQUE_VIOLATION", 409, codes.AlreadyExists)
	ModelNotLocked            = code("MODEL_NOT_LOCKED", 409, codes.FailedPrecondition)
	ModelAlreadyLocked        = code("MODEL_ALREADY_LOCKED", 409, codes.FailedPrecondition)
	ModelAlreadyUnlocked      = code("MODEL_ALREADY_UNLOCKED", 409, codes.FailedPrecondition)
	ModelHasEntities          = code("MODEL_HAS_ENTITIES", 409, codes.FailedPrecondition)
	KeyOwnedByDifferentTenant = code("KEY_OWNED_BY_DIFFERENT_TENANT", 409, codes.AlreadyExists)
	OIDCProviderDuplicate     = code("OIDC_PROVIDER_DUPLICATE", 409, codes.AlreadyExists)
	OIDCProviderInactive      = code("OIDC_PROVIDER_INACTIVE", 409, codes.FailedPrecondition)
	EntityModified            = code("ENTITY_MODIFIED", 412, codes.FailedPrecondition)
	SQLSchemaLimitReached     = code("SQL_SCHEMA_LIMIT_REACHED", 409, codes.ResourceExhausted)
	SQLSchemaInUse            = code("SQL_SCHEMA_IN_USE", 409, codes.FailedPrecondition)
	SearchJobAlreadyTerminal  = code("SEARCH_JOB_ALREADY_TERMINAL", 400, codes.FailedPrecondition)
	// Idempotency-Key (docs/decisions/0040-idempotency-key.md): the first
	// request of the key is still running; the key was used for another
	// request.
	IdempotencyConflict  = retryableCode("IDEMPOTENCY_CONFLICT", 409, codes.Aborted)
	IdempotencyKeyReused = code("IDEMPOTENCY_KEY_REUSED", 422, codes.InvalidArgument)

	// Models, unique keys and schemas.
	InvalidChangeLevel         = code("INVALID_CHANGE_LEVEL", 400, codes.InvalidArgument)
	IncompatibleType           = code("INCOMPATIBLE_TYPE", 400, codes.InvalidArgument)
	PolymorphicSlot            = code("POLYMORPHIC_SLOT", 400, codes.InvalidArgument)
	InvalidUniqueKey           = code("INVALID_UNIQUE_KEY", 422, codes.InvalidArgument)
	InvalidUniqueKeyDefinition = code("INVALID_UNIQUE_KEY_DEFINITION", 422, codes.InvalidArgument)
	CompositeKeyUnsupported    = code("COMPOSITE_KEY_UNSUPPORTED", 422, codes.InvalidArgument)
	SQLNameClash               = code("SQL_NAME_CLASH", 422, codes.InvalidArgument)
	SQLError                   = code("SQL_ERROR", 400, codes.InvalidArgument)

	// Conditions, search and statistics.
	InvalidCondition          = code("INVALID_CONDITION", 400, codes.InvalidArgument)
	InvalidFieldPath          = code("INVALID_FIELD_PATH", 400, codes.InvalidArgument)
	FunctionConditionFailed   = code("FUNCTION_CONDITION_FAILED", 400, codes.InvalidArgument)
	SearchResultLimit         = code("SEARCH_RESULT_LIMIT", 400, codes.InvalidArgument)
	ScanBudgetExhausted       = code("SCAN_BUDGET_EXHAUSTED", 400, codes.ResourceExhausted)
	MissingGroupBy            = code("MISSING_GROUP_BY", 400, codes.InvalidArgument)
	InvalidGroupByPath        = code("INVALID_GROUP_BY_PATH", 400, codes.InvalidArgument)
	DuplicateGroupBy          = code("DUPLICATE_GROUP_BY", 400, codes.InvalidArgument)
	InvalidAggregationOp      = code("INVALID_AGGREGATION_OP", 400, codes.InvalidArgument)
	InvalidAggregationField   = code("INVALID_AGGREGATION_FIELD", 400, codes.InvalidArgument)
	DuplicateAggregationAlias = code("DUPLICATE_AGGREGATION_ALIAS", 400, codes.InvalidArgument)
	InvalidLimit              = code("INVALID_LIMIT", 400, codes.InvalidArgument)
	GroupCardinalityExceeded  = code("GROUP_CARDINALITY_EXCEEDED", 422, codes.ResourceExhausted)

	// Workflows.
	ValidationFailed                 = code("VALIDATION_FAILED", 400, codes.InvalidArgument)
	WorkflowFailed                   = code("WORKFLOW_FAILED", 400, codes.FailedPrecondition)
	WorkflowSchemaVersionUnsupported = code("WORKFLOW_SCHEMA_VERSION_UNSUPPORTED", 400, codes.InvalidArgument)
	ScheduleFunctionInvalidResult    = code("SCHEDULE_FUNCTION_INVALID_RESULT", 500, codes.Internal)

	// Identity: keys, providers, machine clients.
	UnsupportedAlgorithm = code("UNSUPPORTED_ALGORITHM", 400, codes.InvalidArgument)
	UnsupportedKeyType   = code("UNSUPPORTED_KEY_TYPE", 400, codes.InvalidArgument)
	TrustedKeyCapReached = code("TRUSTED_KEY_CAP_REACHED", 400, codes.ResourceExhausted)
	OIDCInvalidTenant    = code("OIDC_INVALID_TENANT", 400, codes.InvalidArgument)
	OIDCSSRFBlocked      = code("OIDC_SSRF_BLOCKED", 400, codes.InvalidArgument)

	// The server's side.
	ServerError             = code("SERVER_ERROR", 500, codes.Internal)
	NotImplemented          = code("NOT_IMPLEMENTED", 501, codes.Unimplemented)
	NotImplementedByBackend = code("NOT_IMPLEMENTED_BY_BACKEND", 501, codes.Unimplemented)
	ServiceUnavailable      = retryableCode("SERVICE_UNAVAILABLE", 503, codes.Unavailable)
	SearchQueueFull         = retryableCode("SEARCH_QUEUE_FULL", 503, codes.ResourceExhausted)
	// SQL queries over the tenant's or the node's connection budget.
	SQLTenantConnectionsBusy = retryableCode("SQL_TENANT_CONNECTIONS_BUSY", 429, codes.ResourceExhausted)
	SQLConnectionsBusy       = retryableCode("SQL_CONNECTIONS_BUSY", 503, codes.Unavailable)
	SQLRoleRightsNotRevoked  = code("SQL_ROLE_RIGHTS_NOT_REVOKED", 503, codes.Unavailable)
	SQLDatabaseUnavailable   = code("SQL_DATABASE_UNAVAILABLE", 503, codes.Unavailable)
	// The compute dispatch codes: every error of these is retryable.
	NoComputeMemberForTag      = retryableCode("NO_COMPUTE_MEMBER_FOR_TAG", 503, codes.Unavailable)
	DispatchTimeout            = retryableCode("DISPATCH_TIMEOUT", 503, codes.Unavailable)
	ComputeMemberDisconnected  = retryableCode("COMPUTE_MEMBER_DISCONNECTED", 503, codes.Unavailable)
	DispatchForwardFailed      = retryableCode("DISPATCH_FORWARD_FAILED", 503, codes.Unavailable)
	TransactionNodeUnavailable = code("TRANSACTION_NODE_UNAVAILABLE", 503, codes.Unavailable)
	// ClientGone is recorded (access log, metrics) for a request whose
	// client left before the answer (nginx's 499); it is never sent.
	ClientGone = code("CLIENT_GONE", 499, codes.Canceled)
)
