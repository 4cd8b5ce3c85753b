package fast

import (
	"errors"
	"fmt"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
	"svc/storage"
)

// codeStatus maps catalogue codes to HTTP statuses; unlisted codes are 400.
var codeStatus = map[string]int{
	"UNAUTHORIZED":                     401,
	"FORBIDDEN":                        403,
	"NOT_FOUND":                        404,
	"ENTITY_NOT_FOUND":                 404,
	"MODEL_NOT_FOUND":                  404,
	"WORKFLOW_NOT_FOUND":               404,
	"SEARCH_JOB_NOT_FOUND":             404,
	"KEYPAIR_NOT_FOUND":                404,
	"TRUSTED_KEY_NOT_FOUND":            404,
	"M2M_CLIENT_NOT_FOUND":             404,
	"OIDC_PROVIDER_NOT_FOUND":          404,
	"FEATURE_DISABLED":                 404,
	"HELP_TOPIC_NOT_FOUND":             404,
	"TRANSACTION_NOT_FOUND":            404,
	"CONFLICT":                         409,
	"UNIQUE_VIOLATION":                 409,
	"MODEL_NOT_LOCKED":                 409,
	"MODEL_ALREADY_LOCKED":             409,
	"MODEL_ALREADY_UNLOCKED":           409,
	"MODEL_HAS_ENTITIES":               409,
	"KEY_OWNED_BY_DIFFERENT_TENANT":    409,
	"OIDC_PROVIDER_DUPLICATE":          409,
	"OIDC_PROVIDER_INACTIVE":           409,
	"SQL_SCHEMA_LIMIT_REACHED":         409,
	"SQL_SCHEMA_IN_USE":                409,
	"TRANSACTION_EXPIRED":              410,
	"ENTITY_MODIFIED":                  412,
	"TOO_MANY_ENTITIES":                413,
	"UNSUPPORTED_MEDIA_TYPE":           415,
	"INVALID_UNIQUE_KEY":               422,
	"INVALID_UNIQUE_KEY_DEFINITION":    422,
	"COMPOSITE_KEY_UNSUPPORTED":        422,
	"GROUP_CARDINALITY_EXCEEDED":       422,
	"PRECONDITION_REQUIRED":            428,
	"SQL_TENANT_CONNECTIONS_BUSY":      429,
	"SERVER_ERROR":                     500,
	"NOT_IMPLEMENTED":                  501,
	"NOT_IMPLEMENTED_BY_BACKEND":       501,
	"SQL_NAME_CLASH":                   422,
	"SEARCH_QUEUE_FULL":                503,
	"SERVICE_UNAVAILABLE":              503,
	"SQL_CONNECTIONS_BUSY":             503,
	"SQL_ROLE_RIGHTS_NOT_REVOKED":      503,
	"NO_COMPUTE_MEMBER_FOR_TAG":        503,
	"DISPATCH_TIMEOUT":                 503,
	"COMPUTE_MEMBER_DISCONNECTED":      503,
	"DISPATCH_FORWARD_FAILED":          503,
	"TRANSACTION_NODE_UNAVAILABLE":     503,
	"SCHEDULE_FUNCTION_INVALID_RESULT": 500,
	"CLIENT_GONE":                      statusClientClosed,
}

// statusClientClosed is the status recorded for a request whose client
// left before the answer (nginx's 499); it is never sent to anyone.
const statusClientClosed = 499

// retryableCodes are retryable whatever the caller says.
var retryableCodes = map[string]bool{"CONFLICT": true, "SEARCH_QUEUE_FULL": true, "SERVICE_UNAVAILABLE": true,
	"SQL_TENANT_CONNECTIONS_BUSY": true, "SQL_CONNECTIONS_BUSY": true}

// writeError renders any error a handler got: catalogue errors with their
// status and properties, storage sentinels as their generic codes, and
// everything else as 500 with a ticket.
func (s *Server) writeError(ctx *fasthttp.RequestCtx, err error) {
	if e, ok := apierr.As(err); ok {
		status, known := codeStatus[e.Code]
		if !known {
			status = 400
		}
		p := &Problem{Status: status, Code: e.Code, Message: e.Message, Retryable: e.Retryable || retryableCodes[e.Code], Internal: e.Cause}
		for _, pr := range e.Props {
			p.Props = append(p.Props, propOf(pr))
		}
		if status >= 500 && e.Cause == nil {
			p.Internal = e
		}
		s.writeProblem(ctx, p)
		return
	}
	switch {
	case errors.Is(err, storage.ErrConflict):
		s.writeProblem(ctx, &Problem{Status: 409, Code: "CONFLICT", Message: "a concurrent change won; retry the request", Retryable: true})
	case errors.Is(err, storage.ErrUnavailable):
		s.writeProblem(ctx, &Problem{Status: 503, Code: "SERVICE_UNAVAILABLE", Message: "storage is busy; retry the request", Retryable: true, Internal: err})
	case errors.Is(err, storage.ErrScanBudget):
		s.writeProblem(ctx, &Problem{Status: 400, Code: "SCAN_BUDGET_EXHAUSTED",
			Message: "the search would examine more rows than the storage engine allows (SVC_SQLITE_SEARCH_SCAN_LIMIT); narrow the condition or raise the limit"})
	case unstorableText(err):
		// A backstop: the text guard (textguard.go) and jsondoc should
		// have refused this before storage. Its own code lets tests tell
		// a missed check from a guarded refusal.
		s.log.Warn("text reached PostgreSQL that it cannot hold; a request check is missing", "err", err)
		s.writeProblem(ctx, &Problem{Status: 400, Code: "UNSTORABLE_TEXT",
			Message: "the request holds text the database cannot store (a NUL character, an unpaired surrogate or bytes that are not UTF-8)"})
	default:
		s.writeProblem(ctx, &Problem{Status: 500, Code: "SERVER_ERROR", Message: "internal error", Internal: err})
	}
}

func propOf(p apierr.Prop) Prop {
	switch v := p.Value.(type) {
	case string:
		return StrProp(p.Key, v)
	case int:
		return IntProp(p.Key, int64(v))
	case int64:
		return IntProp(p.Key, v)
	case bool:
		return RawProp(p.Key, fmt.Sprint(v))
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return StrProp(p.Key, strings.TrimSpace(fmt.Sprint(v)))
		}
		return RawProp(p.Key, string(b))
	}
}

// unstorableText reports a PostgreSQL refusal of text: 22P05 (a \u0000 or
// an escape jsonb cannot translate) or 22021 (bytes not in the encoding).
// The interface keeps pgx out of the HTTP layer.
func unstorableText(err error) bool {
	var st interface{ SQLState() string }
	if !errors.As(err, &st) {
		return false
	}
	switch st.SQLState() {
	case "22P05", "22021":
		return true
	}
	return false
}
