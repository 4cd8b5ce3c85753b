package infer

import (
	"fmt"

	"svc/platform/apierr"
)

// Errors are *apierr.Error so the HTTP layer renders them without a mapping
// table of its own. The codes used here:
//
//   - BAD_REQUEST: malformed JSON, a Limits bound exceeded, a malformed
//     SIMPLE_VIEW import, strict validation failures that are not type
//     mismatches, and change-level violations;
//   - INCOMPATIBLE_TYPE: strict validation found a leaf value whose type is
//     not assignable (props fieldPath, expectedType, actualType);
//   - POLYMORPHIC_SLOT: an extension would give a slot a second kind
//     (props fieldPath, existingKind, incomingKind).

// limitError names the bound a document crossed, so a client can tell which
// knob to respect.
func limitError(name string, max int, what string) *apierr.Error {
	return apierr.New(apierr.BadRequest,
		fmt.Sprintf("%s exceeds the limit %s=%d", what, name, max),
		apierr.P("limit", name), apierr.P("max", max))
}

// syntaxError reports malformed JSON with the byte offset where it was found.
type syntaxError struct {
	Offset int
	Msg    string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("malformed JSON at offset %d: %s", e.Offset, e.Msg)
}

// badRequest wraps a cause (syntax error, decoder complaint) into the API
// error, keeping the cause for logs.
func badRequest(context string, cause error) *apierr.Error {
	return &apierr.Error{Code: apierr.BadRequest, Message: context + ": " + cause.Error(), Cause: cause}
}
