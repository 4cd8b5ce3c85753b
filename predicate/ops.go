package predicate

import (
	"sort"
	"strings"
)

// Op is a comparison operator of simple and lifecycle conditions.
type Op uint8

const (
	opInvalid Op = iota
	OpIsNull
	OpNotNull
	OpEquals
	OpNotEqual
	OpGreaterThan
	OpGreaterOrEqual
	OpLessThan
	OpLessOrEqual
	OpBetween
	OpBetweenInclusive
	OpContains
	OpStartsWith
	OpEndsWith
	OpNotContains
	OpNotStartsWith
	OpNotEndsWith
	OpIEquals
	OpINotEqual
	OpIContains
	OpINotContains
	OpIStartsWith
	OpINotStartsWith
	OpIEndsWith
	OpINotEndsWith
	OpLike
	OpMatchesPattern
	numOps
)

var opNames = [numOps]string{"", "IS_NULL", "NOT_NULL", "EQUALS", "NOT_EQUAL", "GREATER_THAN",
	"GREATER_OR_EQUAL", "LESS_THAN", "LESS_OR_EQUAL", "BETWEEN", "BETWEEN_INCLUSIVE", "CONTAINS",
	"STARTS_WITH", "ENDS_WITH", "NOT_CONTAINS", "NOT_STARTS_WITH", "NOT_ENDS_WITH", "IEQUALS",
	"INOT_EQUAL", "ICONTAINS", "INOT_CONTAINS", "ISTARTS_WITH", "INOT_STARTS_WITH", "IENDS_WITH",
	"INOT_ENDS_WITH", "LIKE", "MATCHES_PATTERN"}

func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return "?"
}

// opAliases are accepted spellings beyond the canonical names
// (docs/decisions/0030-client-compatibility.md: NOT_EQUALS from the Java template's docs,
// the _OR_EQUAL spellings from the current Python template).
var opAliases = map[string]Op{"NOT_EQUALS": OpNotEqual,
	"GREATER_THAN_OR_EQUAL": OpGreaterOrEqual, "LESS_THAN_OR_EQUAL": OpLessOrEqual}

// ParseOp maps an operator name to its value; names are case-sensitive.
func ParseOp(name string) (Op, bool) {
	for i := OpIsNull; i < numOps; i++ {
		if opNames[i] == name {
			return i, true
		}
	}
	o, ok := opAliases[name]
	return o, ok
}

// validOpList is the sorted canonical list quoted in errors.
var validOpList = func() string {
	names := append([]string(nil), opNames[1:]...)
	sort.Strings(names)
	return strings.Join(names, ", ")
}()

type opFamily uint8

const (
	famPresence opFamily = iota
	famCompare           // type-directed, one operand
	famRange             // type-directed, [lo, hi]
	famString            // case-sensitive text, stored strings only
	famIString           // case-insensitive text
	famPattern           // LIKE, MATCHES_PATTERN
)

func (o Op) family() opFamily {
	switch o {
	case OpIsNull, OpNotNull:
		return famPresence
	case OpEquals, OpNotEqual, OpGreaterThan, OpGreaterOrEqual, OpLessThan, OpLessOrEqual:
		return famCompare
	case OpBetween, OpBetweenInclusive:
		return famRange
	case OpContains, OpStartsWith, OpEndsWith, OpNotContains, OpNotStartsWith, OpNotEndsWith:
		return famString
	case OpLike, OpMatchesPattern:
		return famPattern
	}
	return famIString
}

// typeDirected reports whether the operand must parse into a declared type.
func (o Op) typeDirected() bool {
	f := o.family()
	return f == famCompare || f == famRange
}

// ordered reports whether o needs an ordering (not just equality).
func (o Op) ordered() bool {
	return o != OpEquals && o != OpNotEqual && o.typeDirected()
}

// applyCmp turns a three-way comparison of stored against operand into the
// operator's verdict; c2 is the comparison with the upper bound of a range.
func applyCmp(o Op, c, c2 int) bool {
	switch o {
	case OpEquals:
		return c == 0
	case OpNotEqual:
		return c != 0
	case OpGreaterThan:
		return c > 0
	case OpGreaterOrEqual:
		return c >= 0
	case OpLessThan:
		return c < 0
	case OpLessOrEqual:
		return c <= 0
	case OpBetween:
		return c > 0 && c2 < 0
	case OpBetweenInclusive:
		return c >= 0 && c2 <= 0
	}
	return false
}
