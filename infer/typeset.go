package infer

import "math/bits"

// TypeSet is a set of DataTypes with the widening rules applied after every
// change: NULL is absorbed by any concrete type, at most one numeric member
// survives (the join of every numeric type added), and non-numeric types never
// widen into each other. The zero value is the empty set ("nothing observed").
type TypeSet uint32

const (
	nullBit     = TypeSet(1) << Null
	numericMask = TypeSet(1)<<(UnboundDecimal+1) - 1
)

// widensTo lists the direct widening edges of the numeric lattice. BYTE and
// SHORT sit below INTEGER and reach everything it reaches; FLOAT sits below
// DOUBLE. LONG deliberately does not reach DOUBLE (precision would be lost).
var widensTo = [...][]DataType{
	Byte:           {Short},
	Short:          {Integer},
	Integer:        {Long, Double, BigInteger, BigDecimal, UnboundInteger, UnboundDecimal},
	Long:           {BigInteger, BigDecimal, UnboundInteger, UnboundDecimal},
	BigInteger:     {UnboundInteger, UnboundDecimal},
	UnboundInteger: {UnboundDecimal},
	Float:          {Double, UnboundDecimal},
	Double:         {UnboundDecimal},
	BigDecimal:     {UnboundDecimal},
	UnboundDecimal: nil,
}

// upper[t] is every numeric type t is assignable to, t included.
var upper [UnboundDecimal + 1]TypeSet

// join[a][b] is the least numeric type both a and b are assignable to.
var join [UnboundDecimal + 1][UnboundDecimal + 1]DataType

func init() {
	for t := range upper {
		upper[t] = closure(DataType(t))
	}
	for a := range join {
		for b := range join[a] {
			join[a][b] = leastUpperBound(upper[a] & upper[b])
		}
	}
}

func closure(t DataType) TypeSet {
	s := TypeSet(1) << t
	for _, w := range widensTo[t] {
		s |= closure(w)
	}
	return s
}

// leastUpperBound picks the member of common whose own upper set covers all of
// common. The lattice is built so one always exists (tested exhaustively); the
// fallback keeps a broken table from panicking.
func leastUpperBound(common TypeSet) DataType {
	for c := Byte; c <= UnboundDecimal; c++ {
		if common.Has(c) && upper[c]&common == common {
			return c
		}
	}
	return UnboundDecimal
}

// Of returns the set holding the given types, normalised.
func Of(types ...DataType) TypeSet {
	var s TypeSet
	for _, t := range types {
		s = s.Add(t)
	}
	return s
}

// Has reports whether t is a member.
func (s TypeSet) Has(t DataType) bool { return s&(1<<t) != 0 }

// IsEmpty reports whether nothing was observed.
func (s TypeSet) IsEmpty() bool { return s == 0 }

// IsNullOnly reports whether only null was observed.
func (s TypeSet) IsNullOnly() bool { return s == nullBit }

// Len is the number of members.
func (s TypeSet) Len() int { return bits.OnesCount32(uint32(s)) }

// Add returns s with t observed.
func (s TypeSet) Add(t DataType) TypeSet {
	if s == TypeSet(1)<<t {
		return s // the common case: the same type again
	}
	return s.Union(TypeSet(1) << t)
}

// Union returns the set holding everything observed in s or o. It is
// commutative, associative and idempotent, which is what makes model merging
// independent of document order.
func (s TypeSet) Union(o TypeSet) TypeSet {
	all := s | o
	concrete := all &^ (numericMask | nullBit)
	if num := all & numericMask; num != 0 {
		j := DataType(bits.TrailingZeros32(uint32(num)))
		for rest := num &^ (1 << j); rest != 0; rest &= rest - 1 {
			j = join[j][bits.TrailingZeros32(uint32(rest))]
		}
		concrete |= 1 << j
	}
	if concrete == 0 {
		return all & nullBit
	}
	return concrete
}

// Normalize applies the set rules to an arbitrary bit pattern (e.g. one read
// from an import that listed INTEGER and LONG together).
func (s TypeSet) Normalize() TypeSet { return s.Union(0) }

// Types lists the members in canonical order.
func (s TypeSet) Types() []DataType {
	out := make([]DataType, 0, s.Len())
	for r := s; r != 0; r &= r - 1 {
		out = append(out, DataType(bits.TrailingZeros32(uint32(r))))
	}
	return out
}

// Names lists the member names in canonical order; an empty set is ["NULL"], the
// way SIMPLE_VIEW prints "nothing observed yet".
func (s TypeSet) Names() []string {
	if s == 0 {
		return []string{Null.String()}
	}
	out := make([]string, 0, s.Len())
	for _, t := range s.Types() {
		out = append(out, t.String())
	}
	return out
}

// String is the SIMPLE_VIEW descriptor: NAME or [A, B].
func (s TypeSet) String() string { return string(s.appendDescriptor(nil)) }

func (s TypeSet) appendDescriptor(dst []byte) []byte {
	switch s.Len() {
	case 0:
		return append(dst, "NULL"...)
	case 1:
		return append(dst, DataType(bits.TrailingZeros32(uint32(s))).String()...)
	}
	dst = append(dst, '[')
	first := true
	for r := s; r != 0; r &= r - 1 {
		if !first {
			dst = append(dst, ", "...)
		}
		first = false
		dst = append(dst, DataType(bits.TrailingZeros32(uint32(r))).String()...)
	}
	return append(dst, ']')
}

// withoutNull drops NULL, leaving only concrete observations.
func (s TypeSet) withoutNull() TypeSet { return s &^ nullBit }

// AssignableTo reports whether a value of type t is admitted by a field typed
// s: NULL always is, a numeric type is when it widens into the numeric member,
// every other type only by membership.
func AssignableTo(t DataType, s TypeSet) bool {
	if t == Null || s.Has(t) {
		return true
	}
	if t.IsNumeric() {
		return upper[t]&s != 0
	}
	return false
}
