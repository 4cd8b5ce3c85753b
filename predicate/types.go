package predicate

import (
	"sort"
	"strings"
)

// DataType is one of the model's declared leaf types (the inference
// engine's names).
type DataType uint8

const (
	TypeNull DataType = iota
	TypeByte
	TypeShort
	TypeInteger
	TypeLong
	TypeBigInteger
	TypeUnboundInteger
	TypeFloat
	TypeDouble
	TypeBigDecimal
	TypeUnboundDecimal
	TypeString
	TypeCharacter
	TypeLocalDate
	TypeLocalDateTime
	TypeLocalTime
	TypeZonedDateTime
	TypeYear
	TypeYearMonth
	TypeUUID
	TypeTimeUUID
	TypeByteArray
	TypeBoolean
	numDataTypes
)

var dataTypeNames = [numDataTypes]string{
	"NULL", "BYTE", "SHORT", "INTEGER", "LONG", "BIG_INTEGER", "UNBOUND_INTEGER", "FLOAT", "DOUBLE",
	"BIG_DECIMAL", "UNBOUND_DECIMAL", "STRING", "CHARACTER", "LOCAL_DATE", "LOCAL_DATE_TIME",
	"LOCAL_TIME", "ZONED_DATE_TIME", "YEAR", "YEAR_MONTH", "UUID_TYPE", "TIME_UUID_TYPE",
	"BYTE_ARRAY", "BOOLEAN",
}

func (t DataType) String() string {
	if t < numDataTypes {
		return dataTypeNames[t]
	}
	return "UNKNOWN"
}

// ParseDataType maps a type name of the model (e.g. "INTEGER") to its value.
func ParseDataType(name string) (DataType, bool) {
	for i, n := range dataTypeNames {
		if n == name {
			return DataType(i), true
		}
	}
	return 0, false
}

// TypeSet is a set of declared types: one for a plain field, several for a
// polymorphic one such as [INTEGER, STRING].
type TypeSet uint32

// Types builds a set.
func Types(ts ...DataType) TypeSet {
	var s TypeSet
	for _, t := range ts {
		s |= 1 << t
	}
	return s
}

// Has reports whether t is in the set.
func (s TypeSet) Has(t DataType) bool { return s&(1<<t) != 0 }

func (s TypeSet) any(o TypeSet) bool { return s&o != 0 }

var (
	numericTypes = Types(TypeByte, TypeShort, TypeInteger, TypeLong, TypeBigInteger, TypeUnboundInteger,
		TypeFloat, TypeDouble, TypeBigDecimal, TypeUnboundDecimal)
	temporalTypes = Types(TypeLocalDate, TypeLocalDateTime, TypeLocalTime, TypeZonedDateTime, TypeYear, TypeYearMonth)
	// AnyType is what an untyped evaluation (no Schema) assumes for every
	// path: each JSON kind of stored value is compared in its own family.
	AnyType = numericTypes | temporalTypes | Types(TypeString, TypeBoolean)
)

// String renders the set as the model does, e.g. "[INTEGER, STRING]".
func (s TypeSet) String() string {
	var names []string
	for t := DataType(0); t < numDataTypes; t++ {
		if s.Has(t) {
			names = append(names, t.String())
		}
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// PathKind says how a model knows a data path.
type PathKind uint8

const (
	// PathUnknown: not in the model.
	PathUnknown PathKind = iota
	// PathLeaf: a leaf with declared types (a node seen both as object and
	// as scalar counts as a leaf).
	PathLeaf
	// PathContainer: only known as the prefix of deeper leaves (an object).
	PathContainer
)

// Schema is what the predicate compiler needs to know about a model. Paths
// are passed in the schema's form: "$.a.b", "$.tags[*]",
// "$.items[*].name" (an index subscript [n] is looked up as [*]).
type Schema interface {
	Lookup(path string) (PathKind, TypeSet)
}

// FieldMap is a Schema over a map of leaf paths to their declared types.
// Every strict prefix of a leaf that ends before a '.' is a container.
type FieldMap struct {
	leaves     map[string]TypeSet
	containers map[string]bool
}

// NewFieldMap builds a FieldMap from leaf paths.
func NewFieldMap(leaves map[string]TypeSet) *FieldMap {
	f := &FieldMap{leaves: make(map[string]TypeSet, len(leaves)), containers: map[string]bool{}}
	for p, ts := range leaves {
		f.leaves[p] = ts
		for i := 1; i < len(p); i++ {
			if p[i] == '.' {
				f.containers[p[:i]] = true
			}
		}
	}
	return f
}

// Lookup implements Schema.
func (f *FieldMap) Lookup(path string) (PathKind, TypeSet) {
	if ts, ok := f.leaves[path]; ok {
		return PathLeaf, ts
	}
	if f.containers[path] {
		return PathContainer, 0
	}
	return PathUnknown, 0
}

// Paths lists the leaves, sorted (for tests and diagnostics).
func (f *FieldMap) Paths() []string {
	out := make([]string, 0, len(f.leaves))
	for p := range f.leaves {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Lenient wraps a Schema for workflow criteria, where a path the model does
// not know is not an error: it is a leaf with no declared type, so
// comparison and range operators never match there while text and
// presence operators still work (docs/decisions/0020-conditions.md).
func Lenient(s Schema) Schema { return lenient{s} }

type lenient struct{ s Schema }

func (l lenient) Lookup(p string) (PathKind, TypeSet) {
	k, ts := l.s.Lookup(p)
	if k == PathUnknown {
		return PathLeaf, 0
	}
	return k, ts
}
