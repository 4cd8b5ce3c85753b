package iam

import (
	"errors"
	"fmt"
)

// Error is a refusal an IAM service wants the caller to see: the HTTP layer
// renders it as problem+json with Status and Code. Anything else a service
// returns is internal and becomes a 500 with a ticket.
type Error struct {
	Status  int
	Code    string
	Message string
	// Param names the offending request parameter, when there is one.
	Param string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func badRequest(format string, args ...any) *Error {
	return &Error{Status: 400, Code: "BAD_REQUEST", Message: fmt.Sprintf(format, args...)}
}

func badParam(param, format string, args ...any) *Error {
	e := badRequest(format, args...)
	e.Param = param
	return e
}

func notFound(code, msg string) *Error { return &Error{Status: 404, Code: code, Message: msg} }

// AsError returns the *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
