package apierr

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// TestCatalogue lists every code with its HTTP status, gRPC status and
// whether it is always retryable. A code added, removed or changed in
// catalogue.go fails here until this list says the same: the list is the
// review point for what clients see. Each code's help topic is checked by
// fast's TestCatalogueCodesHaveTopics.
func TestCatalogue(t *testing.T) {
	type row struct {
		code      Code
		name      string
		http      int
		grpc      codes.Code
		retryable bool
	}
	want := []row{
		{BadRequest, "BAD_REQUEST", 400, codes.InvalidArgument, false},
		{RequestTimeout, "BAD_REQUEST", 408, codes.DeadlineExceeded, false},
		{PayloadTooLarge, "BAD_REQUEST", 413, codes.ResourceExhausted, false},
		{HeadersTooLarge, "BAD_REQUEST", 431, codes.ResourceExhausted, false},
		{MalformedRequest, "MALFORMED_REQUEST", 400, codes.InvalidArgument, false},
		{MethodNotAllowed, "METHOD_NOT_ALLOWED", 405, codes.Unimplemented, false},
		{UnsupportedMedia, "UNSUPPORTED_MEDIA_TYPE", 415, codes.InvalidArgument, false},
		{UnstorableText, "UNSTORABLE_TEXT", 400, codes.InvalidArgument, false},
		{PreconditionNeeded, "PRECONDITION_REQUIRED", 428, codes.FailedPrecondition, false},
		{TooManyEntities, "TOO_MANY_ENTITIES", 413, codes.ResourceExhausted, false},
		{FeatureDisabled, "FEATURE_DISABLED", 404, codes.Unimplemented, false},
		{Unauthorized, "UNAUTHORIZED", 401, codes.Unauthenticated, false},
		{Forbidden, "FORBIDDEN", 403, codes.PermissionDenied, false},
		{NotFound, "NOT_FOUND", 404, codes.NotFound, false},
		{EntityNotFound, "ENTITY_NOT_FOUND", 404, codes.NotFound, false},
		{ModelNotFound, "MODEL_NOT_FOUND", 404, codes.NotFound, false},
		{WorkflowNotFound, "WORKFLOW_NOT_FOUND", 404, codes.NotFound, false},
		{SearchJobNotFound, "SEARCH_JOB_NOT_FOUND", 404, codes.NotFound, false},
		{KeypairNotFound, "KEYPAIR_NOT_FOUND", 404, codes.NotFound, false},
		{TrustedKeyNotFound, "TRUSTED_KEY_NOT_FOUND", 404, codes.NotFound, false},
		{M2MClientNotFound, "M2M_CLIENT_NOT_FOUND", 404, codes.NotFound, false},
		{OIDCProviderNotFound, "OIDC_PROVIDER_NOT_FOUND", 404, codes.NotFound, false},
		{HelpTopicNotFound, "HELP_TOPIC_NOT_FOUND", 404, codes.NotFound, false},
		{TransactionNotFound, "TRANSACTION_NOT_FOUND", 404, codes.NotFound, false},
		{TransactionExpired, "TRANSACTION_EXPIRED", 410, codes.FailedPrecondition, false},
		{TransitionNotFound, "TRANSITION_NOT_FOUND", 400, codes.InvalidArgument, false},
		{ConditionTypeMismatch, "CONDITION_TYPE_MISMATCH", 400, codes.InvalidArgument, false},
		{Conflict, "CONFLICT", 409, codes.Aborted, true},
		{UniqueViolation, "UNIQUE_VIOLATION", 409, codes.AlreadyExists, false},
		{ModelNotLocked, "MODEL_NOT_LOCKED", 409, codes.FailedPrecondition, false},
		{ModelAlreadyLocked, "MODEL_ALREADY_LOCKED", 409, codes.FailedPrecondition, false},
		{ModelAlreadyUnlocked, "MODEL_ALREADY_UNLOCKED", 409, codes.FailedPrecondition, false},
		{ModelHasEntities, "MODEL_HAS_ENTITIES", 409, codes.FailedPrecondition, false},
		{KeyOwnedByDifferentTenant, "KEY_OWNED_BY_DIFFERENT_TENANT", 409, codes.AlreadyExists, false},
		{OIDCProviderDuplicate, "OIDC_PROVIDER_DUPLICATE", 409, codes.AlreadyExists, false},
		{OIDCProviderInactive, "OIDC_PROVIDER_INACTIVE", 409, codes.FailedPrecondition, false},
		{EntityModified, "ENTITY_MODIFIED", 412, codes.FailedPrecondition, false},
		{SQLSchemaLimitReached, "SQL_SCHEMA_LIMIT_REACHED", 409, codes.ResourceExhausted, false},
		{SQLSchemaInUse, "SQL_SCHEMA_IN_USE", 409, codes.FailedPrecondition, false},
		{SearchJobAlreadyTerminal, "SEARCH_JOB_ALREADY_TERMINAL", 400, codes.FailedPrecondition, false},
		{IdempotencyConflict, "IDEMPOTENCY_CONFLICT", 409, codes.Aborted, true},
		{IdempotencyKeyReused, "IDEMPOTENCY_KEY_REUSED", 422, codes.InvalidArgument, false},
		{InvalidChangeLevel, "INVALID_CHANGE_LEVEL", 400, codes.InvalidArgument, false},
		{IncompatibleType, "INCOMPATIBLE_TYPE", 400, codes.InvalidArgument, false},
		{PolymorphicSlot, "POLYMORPHIC_SLOT", 400, codes.InvalidArgument, false},
		{InvalidUniqueKey, "INVALID_UNIQUE_KEY", 422, codes.InvalidArgument, false},
		{InvalidUniqueKeyDefinition, "INVALID_UNIQUE_KEY_DEFINITION", 422, codes.InvalidArgument, false},
		{CompositeKeyUnsupported, "COMPOSITE_KEY_UNSUPPORTED", 422, codes.InvalidArgument, false},
		{SQLNameClash, "SQL_NAME_CLASH", 422, codes.InvalidArgument, false},
		{SQLError, "SQL_ERROR", 400, codes.InvalidArgument, false},
		{InvalidCondition, "INVALID_CONDITION", 400, codes.InvalidArgument, false},
		{InvalidFieldPath, "INVALID_FIELD_PATH", 400, codes.InvalidArgument, false},
		{FunctionConditionFailed, "FUNCTION_CONDITION_FAILED", 400, codes.InvalidArgument, false},
		{SearchResultLimit, "SEARCH_RESULT_LIMIT", 400, codes.InvalidArgument, false},
		{ScanBudgetExhausted, "SCAN_BUDGET_EXHAUSTED", 400, codes.ResourceExhausted, false},
		{MissingGroupBy, "MISSING_GROUP_BY", 400, codes.InvalidArgument, false},
		{InvalidGroupByPath, "INVALID_GROUP_BY_PATH", 400, codes.InvalidArgument, false},
		{DuplicateGroupBy, "DUPLICATE_GROUP_BY", 400, codes.InvalidArgument, false},
		{InvalidAggregationOp, "INVALID_AGGREGATION_OP", 400, codes.InvalidArgument, false},
		{InvalidAggregationField, "INVALID_AGGREGATION_FIELD", 400, codes.InvalidArgument, false},
		{DuplicateAggregationAlias, "DUPLICATE_AGGREGATION_ALIAS", 400, codes.InvalidArgument, false},
		{InvalidLimit, "INVALID_LIMIT", 400, codes.InvalidArgument, false},
		{GroupCardinalityExceeded, "GROUP_CARDINALITY_EXCEEDED", 422, codes.ResourceExhausted, false},
		{ValidationFailed, "VALIDATION_FAILED", 400, codes.InvalidArgument, false},
		{WorkflowFailed, "WORKFLOW_FAILED", 400, codes.FailedPrecondition, false},
		{WorkflowSchemaVersionUnsupported, "WORKFLOW_SCHEMA_VERSION_UNSUPPORTED", 400, codes.InvalidArgument, false},
		{ScheduleFunctionInvalidResult, "SCHEDULE_FUNCTION_INVALID_RESULT", 500, codes.Internal, false},
		{UnsupportedAlgorithm, "UNSUPPORTED_ALGORITHM", 400, codes.InvalidArgument, false},
		{UnsupportedKeyType, "UNSUPPORTED_KEY_TYPE", 400, codes.InvalidArgument, false},
		{TrustedKeyCapReached, "TRUSTED_KEY_CAP_REACHED", 400, codes.ResourceExhausted, false},
		{OIDCInvalidTenant, "OIDC_INVALID_TENANT", 400, codes.InvalidArgument, false},
		{OIDCSSRFBlocked, "OIDC_SSRF_BLOCKED", 400, codes.InvalidArgument, false},
		{ServerError, "SERVER_ERROR", 500, codes.Internal, false},
		{NotImplemented, "NOT_IMPLEMENTED", 501, codes.Unimplemented, false},
		{NotImplementedByBackend, "NOT_IMPLEMENTED_BY_BACKEND", 501, codes.Unimplemented, false},
		{ServiceUnavailable, "SERVICE_UNAVAILABLE", 503, codes.Unavailable, true},
		{SearchQueueFull, "SEARCH_QUEUE_FULL", 503, codes.ResourceExhausted, true},
		{SQLTenantConnectionsBusy, "SQL_TENANT_CONNECTIONS_BUSY", 429, codes.ResourceExhausted, true},
		{SQLConnectionsBusy, "SQL_CONNECTIONS_BUSY", 503, codes.Unavailable, true},
		{SQLRoleRightsNotRevoked, "SQL_ROLE_RIGHTS_NOT_REVOKED", 503, codes.Unavailable, false},
		{SQLDatabaseUnavailable, "SQL_DATABASE_UNAVAILABLE", 503, codes.Unavailable, false},
		{NoComputeMemberForTag, "NO_COMPUTE_MEMBER_FOR_TAG", 503, codes.Unavailable, true},
		{DispatchTimeout, "DISPATCH_TIMEOUT", 503, codes.Unavailable, true},
		{ComputeMemberDisconnected, "COMPUTE_MEMBER_DISCONNECTED", 503, codes.Unavailable, true},
		{DispatchForwardFailed, "DISPATCH_FORWARD_FAILED", 503, codes.Unavailable, true},
		{TransactionNodeUnavailable, "TRANSACTION_NODE_UNAVAILABLE", 503, codes.Unavailable, false},
		{ClientGone, "CLIENT_GONE", 499, codes.Canceled, false},
	}
	all := Catalogue()
	if len(all) != len(want) {
		t.Errorf("catalogue has %d codes, the list %d", len(all), len(want))
	}
	for i, w := range want {
		c := w.code
		if c.String() != w.name || c.HTTPStatus() != w.http || c.GRPCStatus() != w.grpc || c.Retryable() != w.retryable {
			t.Errorf("%s: catalogue says %d %v retryable=%v, the list %d %v retryable=%v",
				w.name, c.HTTPStatus(), c.GRPCStatus(), c.Retryable(), w.http, w.grpc, w.retryable)
		}
		if c.Topic() != "errors."+w.name {
			t.Errorf("%s: topic %q", w.name, c.Topic())
		}
		if i < len(all) && all[i] != c {
			t.Errorf("entry %d is %s, the list has %s there", i, all[i], w.name)
		}
	}
}

// TestZeroCodeIsServerError: an Error built without a code reads as
// SERVER_ERROR, never as an empty code on the wire.
func TestZeroCodeIsServerError(t *testing.T) {
	var c Code
	if c.String() != "SERVER_ERROR" || c.HTTPStatus() != 500 {
		t.Fatalf("zero Code = %s %d", c, c.HTTPStatus())
	}
}

func TestLookup(t *testing.T) {
	if c, ok := Lookup("BAD_REQUEST"); !ok || c != BadRequest {
		t.Fatalf("Lookup(BAD_REQUEST) = %v %v, want the plain 400 entry", c, ok)
	}
	if _, ok := Lookup("NO_SUCH_CODE"); ok {
		t.Fatal("unknown code found")
	}
}
