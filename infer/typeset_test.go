package infer

import "testing"

// The numeric join table of docs/decisions/0010-schema-inference.md, plus the BYTE/SHORT/FLOAT
// edges.
func TestNumericJoinTable(t *testing.T) {
	I, L, BI, UI, D, BD, UD := Integer, Long, BigInteger, UnboundInteger, Double, BigDecimal, UnboundDecimal
	table := map[[2]DataType]DataType{
		{I, I}: I, {I, L}: L, {I, BI}: BI, {I, UI}: UI, {I, D}: D, {I, BD}: BD, {I, UD}: UD,
		{L, L}: L, {L, BI}: BI, {L, UI}: UI, {L, D}: UD, {L, BD}: BD, {L, UD}: UD,
		{BI, BI}: BI, {BI, UI}: UI, {BI, D}: UD, {BI, BD}: UD, {BI, UD}: UD,
		{UI, UI}: UI, {UI, D}: UD, {UI, BD}: UD, {UI, UD}: UD,
		{D, D}: D, {D, BD}: UD, {D, UD}: UD,
		{BD, BD}: BD, {BD, UD}: UD,
		{Byte, I}: I, {Byte, Short}: Short, {Byte, D}: D, {Short, L}: L, {Float, D}: D, {Float, I}: D, {Float, L}: UD,
	}
	for pair, want := range table {
		for _, p := range [][2]DataType{pair, {pair[1], pair[0]}} {
			if got := Of(p[0], p[1]); got != Of(want) {
				t.Errorf("%s ∨ %s = %s, want %s", p[0], p[1], got, want)
			}
		}
	}
}

// Over every ordered triple of types (and of small sets), union is
// commutative, associative and idempotent, NULL is absorbed, and at most one
// numeric member survives.
func TestTypeSetAlgebraExhaustive(t *testing.T) {
	var sets []TypeSet
	for a := DataType(0); a < numDataTypes; a++ {
		sets = append(sets, Of(a))
		for b := a + 1; b < numDataTypes; b += 3 {
			sets = append(sets, Of(a, b))
		}
	}
	for _, x := range sets {
		if x.Union(x) != x {
			t.Fatalf("%s not idempotent", x)
		}
		for _, y := range sets {
			xy := x.Union(y)
			if xy != y.Union(x) {
				t.Fatalf("%s ∪ %s not commutative", x, y)
			}
			if xy.Has(Null) && xy != nullBit {
				t.Fatalf("%s ∪ %s = %s keeps NULL beside a concrete type", x, y, xy)
			}
			if n := (xy & numericMask).Len(); n > 1 {
				t.Fatalf("%s ∪ %s = %s has %d numeric members", x, y, xy, n)
			}
			for _, z := range sets {
				if xy.Union(z) != x.Union(y.Union(z)) {
					t.Fatalf("(%s ∪ %s) ∪ %s != %s ∪ (%s ∪ %s)", x, y, z, x, y, z)
				}
			}
		}
	}
}

func TestTypeSetDescriptor(t *testing.T) {
	for s, want := range map[TypeSet]string{
		0:                                      "NULL",
		Of(Null):                               "NULL",
		Of(String, Integer):                    "[INTEGER, STRING]",
		Of(Boolean, Double, LocalDate, String): "[DOUBLE, STRING, LOCAL_DATE, BOOLEAN]",
		Of(YearMonth, String, LocalDate):       "[STRING, LOCAL_DATE, YEAR_MONTH]",
		Of(Null, String):                       "STRING",
		Of(Byte, String):                       "[BYTE, STRING]",
	} {
		if got := s.String(); got != want {
			t.Errorf("%b: %s, want %s", s, got, want)
		}
		if back, err := parseTypeSet([]byte(s.String())); err != nil || back.String() != want {
			t.Errorf("%s: parsed back as %s (%v)", want, back, err)
		}
	}
}

func TestAssignableTo(t *testing.T) {
	yes := [][2]any{{Integer, Of(Double)}, {Byte, Of(Integer)}, {Long, Of(BigDecimal)}, {Null, Of(String)}, {LocalDate, Of(String, LocalDate)}}
	no := [][2]any{{Double, Of(Integer)}, {Long, Of(Double)}, {Long, Of(Integer)}, {LocalDate, Of(String)}, {LocalDate, Of(LocalDateTime)}, {Boolean, Of(Integer)}}
	for _, c := range yes {
		if !AssignableTo(c[0].(DataType), c[1].(TypeSet)) {
			t.Errorf("%s should be assignable to %s", c[0], c[1])
		}
	}
	for _, c := range no {
		if AssignableTo(c[0].(DataType), c[1].(TypeSet)) {
			t.Errorf("%s should not be assignable to %s", c[0], c[1])
		}
	}
}
