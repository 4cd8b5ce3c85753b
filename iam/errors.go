package iam

import (
	"fmt"

	"svc/platform/apierr"
)

// A refusal an IAM service wants the caller to see is an *apierr.Error
// (its code carries the status); anything else a service returns is
// internal and becomes a 500 with a ticket.

func badRequest(format string, args ...any) *apierr.Error {
	return apierr.Newf(apierr.BadRequest, format, args...)
}

// badParam names the offending request parameter in `properties.parameter`.
func badParam(param, format string, args ...any) *apierr.Error {
	return apierr.New(apierr.BadRequest, fmt.Sprintf(format, args...), apierr.P("parameter", param))
}

func notFound(code apierr.Code, msg string) *apierr.Error { return apierr.New(code, msg) }
