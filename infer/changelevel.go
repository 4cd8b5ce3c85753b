package infer

import "svc/platform/apierr"

// ChangeLevel says how far an entity write may widen a LOCKED model. Levels
// form a hierarchy: each permits the changes of every lower level.
type ChangeLevel uint8

const (
	// ChangeNone: strict validation, the model never changes.
	ChangeNone ChangeLevel = iota
	// ChangeArrayLength: arrays may grow longer, keeping their element type.
	ChangeArrayLength
	// ChangeArrayElements: array element types may change.
	ChangeArrayElements
	// ChangeType: field types may widen or become polymorphic, a field may
	// become nullable.
	ChangeType
	// ChangeStructural: new fields, at any depth.
	ChangeStructural
)

var changeLevelNames = [...]string{"", "ARRAY_LENGTH", "ARRAY_ELEMENTS", "TYPE", "STRUCTURAL"}

// String is the wire name; ChangeNone is "".
func (c ChangeLevel) String() string {
	if int(c) < len(changeLevelNames) {
		return changeLevelNames[c]
	}
	return "INVALID"
}

// validChangeLevels is the list clients are told about.
var validChangeLevels = []string{"ARRAY_LENGTH", "ARRAY_ELEMENTS", "TYPE", "STRUCTURAL"}

// ParseChangeLevel maps a wire name to its level; "" is ChangeNone. Names are
// case-sensitive (docs/decisions/0012-model-lifecycle-and-validation.md).
func ParseChangeLevel(s string) (ChangeLevel, error) {
	for i, n := range changeLevelNames {
		if n == s {
			return ChangeLevel(i), nil
		}
	}
	return ChangeNone, apierr.New(apierr.BadRequest,
		`invalid change level "`+s+`"; valid values: ARRAY_LENGTH, ARRAY_ELEMENTS, TYPE, STRUCTURAL`,
		apierr.P("parameter", "changeLevel"),
		apierr.P("suppliedValue", s),
		apierr.P("validValues", validChangeLevels))
}
