package crud

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"testing"

	"svc/platform/apierr"
	"svc/storage"
)

// TestAPIErrorShapes: the in-band error object (docs/decisions/0019-compute-members.md) of every kind of failure, as
// classified by the HTTP API's status table.
func TestAPIErrorShapes(t *testing.T) {
	s := New(Services{}, testTokens, slog.New(slog.DiscardHandler))
	unavailable := apierr.New(apierr.ServiceUnavailable, "storage is busy")
	for _, tc := range []struct {
		name      string
		err       error
		code, msg string
		retryable bool
	}{
		{"4xx", apierr.New(apierr.EntityNotFound, "entity id=x not found"), "CLIENT_ERROR", "ENTITY_NOT_FOUND: entity id=x not found", false},
		{"conflict sentinel", fmt.Errorf("commit: %w", storage.ErrConflict), "CLIENT_ERROR", "CONFLICT: transaction conflict — retry", true},
		{"retryable by code", apierr.New(apierr.Conflict, "lost the race"), "CLIENT_ERROR", "CONFLICT: lost the race", true},
		{"412", apierr.New(apierr.EntityModified, "entity has been modified since last read"), "CLIENT_ERROR", "ENTITY_MODIFIED: entity has been modified since last read", false},
		{"503 catalogue", unavailable, "SERVER_ERROR", "SERVICE_UNAVAILABLE: storage is busy", true},
		{"501", apierr.New(apierr.NotImplemented, "JSON Patch is not supported"), "SERVER_ERROR", "NOT_IMPLEMENTED: JSON Patch is not supported", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := s.apiError(tc.err)
			if e.Code != tc.code || e.Message != tc.msg || e.Retryable != tc.retryable {
				t.Fatalf("got %+v, want %s %q retryable=%v", e, tc.code, tc.msg, tc.retryable)
			}
		})
	}
	ticket := regexp.MustCompile(`^SERVER_ERROR: internal error \[ticket: [0-9a-f-]{36}\]$`)
	for _, err := range []error{errors.New("dial tcp 10.1.2.3:5432: refused"), &apierr.Error{Code: apierr.ServerError, Message: "boom", Cause: errors.New("secret")}} {
		if e := s.apiError(err); e.Code != "SERVER_ERROR" || !ticket.MatchString(e.Message) || e.Retryable {
			t.Fatalf("internal error %v shown as %+v", err, e)
		}
	}
}
