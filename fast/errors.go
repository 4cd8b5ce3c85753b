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

// writeError renders any error a handler got: catalogue errors with their
// code's status and their properties, storage sentinels as their generic
// codes, and everything else as 500 with a ticket. Statuses come from the
// catalogue (platform/apierr/catalogue.go); there is no table here.
func (s *Server) writeError(ctx *fasthttp.RequestCtx, err error) {
	if e, ok := apierr.As(err); ok {
		p := &Problem{Code: e.Code, Message: e.Message, Retryable: e.IsRetryable(), Internal: e.Cause}
		for _, pr := range e.Props {
			p.Props = append(p.Props, propOf(pr))
		}
		if p.Status() >= 500 && e.Cause == nil {
			p.Internal = e
		}
		s.writeProblem(ctx, p)
		return
	}
	switch {
	case errors.Is(err, storage.ErrConflict):
		s.writeProblem(ctx, &Problem{Code: apierr.Conflict, Message: "a concurrent change won; retry the request", Retryable: true})
	case errors.Is(err, storage.ErrUnavailable):
		s.writeProblem(ctx, &Problem{Code: apierr.ServiceUnavailable, Message: "storage is busy; retry the request", Retryable: true, Internal: err})
	case errors.Is(err, storage.ErrScanBudget):
		s.writeProblem(ctx, &Problem{Code: apierr.ScanBudgetExhausted,
			Message: "the search would examine more rows than the storage engine allows (SVC_SQLITE_SEARCH_SCAN_LIMIT); narrow the condition or raise the limit"})
	case storage.IsUnstorableText(err):
		// A backstop: the text guard (textguard.go) and jsondoc should
		// have refused this before storage. Its own code lets tests tell
		// a missed check from a guarded refusal.
		s.log.Warn("text reached storage that it cannot hold; a request check is missing", "err", err)
		s.writeProblem(ctx, &Problem{Code: apierr.UnstorableText,
			Message: "the request holds text the database cannot store (a NUL character, an unpaired surrogate or bytes that are not UTF-8)"})
	default:
		s.writeProblem(ctx, &Problem{Code: apierr.ServerError, Message: "internal error", Internal: err})
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
