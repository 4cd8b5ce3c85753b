// Package apierr is the error domain packages return when a request cannot
// be served: a code of the closed error catalogue (catalogue.go), a message
// for people, and the error-specific properties clients read. The code
// carries its HTTP and gRPC statuses; the HTTP layer renders the
// problem+json envelope, the gRPC layer the CRUD error payload.
package apierr

import (
	"errors"
	"fmt"
)

// Error is one API-visible failure.
type Error struct {
	Code      Code
	Message   string
	Props     []Prop
	Retryable bool
	// Cause is kept for logs; it is never shown to clients in sanitized mode.
	Cause error
}

// Prop is an error-specific member of the envelope's `properties`. Value is
// a string, integer, bool or string slice.
type Prop struct {
	Key   string
	Value any
}

// New builds an error with properties.
func New(code Code, msg string, props ...Prop) *Error {
	return &Error{Code: code, Message: msg, Props: props}
}

// Newf builds an error with a formatted message.
func Newf(code Code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// P is shorthand for a property.
func P(key string, value any) Prop { return Prop{Key: key, Value: value} }

func (e *Error) Error() string { return e.Code.String() + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Cause }

// IsRetryable reports whether a client may retry: the code is retryable,
// or this error is.
func (e *Error) IsRetryable() bool { return e.Retryable || e.Code.Retryable() }

// As extracts an *Error from err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
