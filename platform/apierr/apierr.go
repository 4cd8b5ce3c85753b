// Package apierr is the error domain packages return when a request cannot
// be served: a stable code from the error catalogue, a message for people,
// and the error-specific properties clients read. The HTTP layer maps the
// code to a status and renders the problem+json envelope.
package apierr

import (
	"errors"
	"fmt"
)

// Error is one API-visible failure.
type Error struct {
	Code      string
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
func New(code, msg string, props ...Prop) *Error {
	return &Error{Code: code, Message: msg, Props: props}
}

// Newf builds an error with a formatted message.
func Newf(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// P is shorthand for a property.
func P(key string, value any) Prop { return Prop{Key: key, Value: value} }

func (e *Error) Error() string { return e.Code + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Cause }

// As extracts an *Error from err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Common codes of the catalogue (docs/decisions/0004-error-envelope.md) used across packages.
const (
	BadRequest          = "BAD_REQUEST"
	NotFound            = "NOT_FOUND"
	Conflict            = "CONFLICT"
	ServerError         = "SERVER_ERROR"
	ModelNotFound       = "MODEL_NOT_FOUND"
	ModelAlreadyLocked  = "MODEL_ALREADY_LOCKED"
	ModelAlreadyUnlock  = "MODEL_ALREADY_UNLOCKED"
	ModelHasEntities    = "MODEL_HAS_ENTITIES"
	ModelNotLocked      = "MODEL_NOT_LOCKED"
	InvalidChangeLevel  = "INVALID_CHANGE_LEVEL"
	IncompatibleType    = "INCOMPATIBLE_TYPE"
	PolymorphicSlot     = "POLYMORPHIC_SLOT"
	InvalidUniqueKeyDef = "INVALID_UNIQUE_KEY_DEFINITION"
	ServiceUnavailable  = "SERVICE_UNAVAILABLE"
)
