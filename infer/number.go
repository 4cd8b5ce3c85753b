package infer

// Number classification works on the literal's digits only. Building the
// value (big.Int, float64) is exactly what lets `1e1000000000` hang or lose
// precision, so every bound below is a digit count or a digit-string compare.

// Magnitude bounds of each integer class as decimal digit strings; a negative
// value may reach one further (two's complement).
var intBounds = [...]struct {
	class    DataType
	pos, neg string
}{
	{Byte, "127", "128"},
	{Short, "32767", "32768"},
	{Integer, "2147483647", "2147483648"},
	{Long, "9223372036854775807", "9223372036854775808"},
	{BigInteger, "170141183460469231731687303715884105727", "170141183460469231731687303715884105728"},
}

// maxInt128Digits is the digit count of 2^127; a whole number with more digits
// is UNBOUND_INTEGER without further look.
const maxInt128Digits = 39

// expSaturation caps parsed exponents: far beyond every class boundary, yet
// small enough that scale arithmetic on int64 cannot overflow.
const expSaturation = 1 << 40

// classifyNumber returns the narrowest class of a syntactically valid JSON
// number literal. Callers apply the INTEGER floor where the context needs it.
func classifyNumber(b []byte) DataType {
	if t, ok := classifyShort(b); ok {
		return t
	}
	return classifyDigits(b)
}

// classifyDigits is the general classification from the literal's digits.
func classifyDigits(b []byte) DataType {
	i := 0
	neg := false
	if b[0] == '-' {
		neg = true
		i++
	}
	intStart := i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	intEnd := i
	fracStart, fracEnd := i, i
	if i < len(b) && b[i] == '.' {
		i++
		fracStart = i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		fracEnd = i
	}
	var exp int64
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		expNeg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			expNeg = b[i] == '-'
			i++
		}
		for ; i < len(b); i++ {
			if exp < expSaturation {
				exp = exp*10 + int64(b[i]-'0')
			}
		}
		if expNeg {
			exp = -exp
		}
	}

	d := digits{a: b[intStart:intEnd], b: b[fracStart:fracEnd]}
	n := d.len()
	first, last := -1, -1
	for k := 0; k < n; k++ {
		if d.at(k) != '0' {
			if first < 0 {
				first = k
			}
			last = k
		}
	}
	if first < 0 {
		return Byte // zero, -0, 0.0e7 …
	}
	precision := int64(last - first + 1)
	// scale after stripping trailing zeros: fraction digits minus exponent,
	// minus every zero that trailed the last significant digit.
	scale := int64(len(d.b)) - exp - int64(n-1-last)

	if scale <= 0 {
		if precision-scale > maxInt128Digits {
			return UnboundInteger
		}
		var buf [maxInt128Digits]byte
		w := 0
		for k := first; k <= last; k++ {
			buf[w] = d.at(k)
			w++
		}
		for z := int64(0); z < -scale; z++ {
			buf[w] = '0'
			w++
		}
		for _, bd := range intBounds {
			if fitsMagnitude(buf[:w], bd.pos, bd.neg, neg) {
				return bd.class
			}
		}
		return UnboundInteger
	}

	if precision <= 15 && scale <= 292 {
		return Double
	}
	if scale <= 18 {
		if precision <= 38 && precision-scale <= 20 {
			return BigDecimal
		}
		if precision <= 39 && precision-scale <= 21 {
			// unscaled × 10^(18−scale) must fit a signed Int128.
			var buf [maxInt128Digits]byte
			w := 0
			for k := first; k <= last; k++ {
				buf[w] = d.at(k)
				w++
			}
			for z := scale; z < 18; z++ {
				buf[w] = '0'
				w++
			}
			top := intBounds[len(intBounds)-1]
			if fitsMagnitude(buf[:w], top.pos, top.neg, neg) {
				return BigDecimal
			}
		}
	}
	return UnboundDecimal
}

// digits views the integer and fraction digit runs as one sequence without
// copying them together.
type digits struct{ a, b []byte }

func (d digits) len() int { return len(d.a) + len(d.b) }

func (d digits) at(k int) byte {
	if k < len(d.a) {
		return d.a[k]
	}
	return d.b[k-len(d.a)]
}

// fitsMagnitude compares a digit string without leading zeros against the
// bound for its sign.
func fitsMagnitude(v []byte, pos, neg string, negative bool) bool {
	bound := pos
	if negative {
		bound = neg
	}
	if len(v) != len(bound) {
		return len(v) < len(bound)
	}
	return string(v) <= bound
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// fieldClass applies the INTEGER floor that every integer outside an
// all-integer array gets.
func fieldClass(t DataType) DataType {
	if t < Integer {
		return Integer
	}
	return t
}

// classifyShort answers the common literals without the general digit
// analysis: integers of up to 18 digits and plain decimals of up to 15
// digits whose last fraction digit is not zero.
func classifyShort(b []byte) (DataType, bool) {
	i := 0
	neg := b[0] == '-'
	if neg {
		i = 1
	}
	var v int64
	start := i
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int64(c-'0')
		if i-start >= 18 {
			return 0, false
		}
	}
	if i == len(b) {
		if neg {
			v = -v
		}
		switch {
		case v >= -128 && v <= 127:
			return Byte, true
		case v >= -32768 && v <= 32767:
			return Short, true
		case v >= -1<<31 && v <= 1<<31-1:
			return Integer, true
		}
		return Long, true
	}
	if b[i] != '.' {
		return 0, false
	}
	digits := i - start
	for i++; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false // exponent
		}
		digits++
	}
	if digits > 15 || b[len(b)-1] == '0' {
		return 0, false
	}
	return Double, true
}
