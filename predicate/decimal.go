package predicate

import "strconv"

// dec is an exact decimal read from number text without float64: the value
// is ±0.d₁d₂…dₙ × 10^exp where the digits are a ++ b (two sub-slices of the
// text so that reading a stored number allocates nothing), the first digit
// is non-zero and the last is non-zero. No digits means zero.
type dec struct {
	a, b []byte
	neg  bool
	exp  int64
}

// expLimit saturates exponents: a number beyond ±10^(10^15) compares like
// one at the limit, which only matters against another such number.
const expLimit = 1_000_000_000_000_000

// parseDec reads JSON number text, and also the wider forms an operand
// string may hold ("+5", "007", ".5", "5.", "1E2"). ok is false for
// anything else, with no allocation either way.
func parseDec(s []byte, lenient bool) (d dec, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '-' || (lenient && s[i] == '+')) {
		d.neg = s[i] == '-'
		i++
	}
	st := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	ip := s[st:i]
	if !lenient && (len(ip) == 0 || (len(ip) > 1 && ip[0] == '0')) {
		return dec{}, false
	}
	var fp []byte
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		fp = s[fs:i]
		if len(fp) == 0 && !lenient {
			return dec{}, false
		}
	}
	if len(ip) == 0 && len(fp) == 0 {
		return dec{}, false
	}
	var e int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if e < expLimit {
				e = e*10 + int64(s[i]-'0')
			}
			i++
		}
		if i == es {
			return dec{}, false
		}
		if eneg {
			e = -e
		}
	}
	if i != len(s) {
		return dec{}, false
	}
	for len(ip) > 0 && ip[0] == '0' {
		ip = ip[1:]
	}
	if len(ip) > 0 {
		d.a, d.b = ip, fp
		d.exp = int64(len(ip)) + e
	} else {
		k := 0
		for k < len(fp) && fp[k] == '0' {
			k++
		}
		d.a = fp[k:]
		d.exp = e - int64(k)
	}
	for len(d.b) > 0 && d.b[len(d.b)-1] == '0' {
		d.b = d.b[:len(d.b)-1]
	}
	if len(d.b) == 0 {
		for len(d.a) > 0 && d.a[len(d.a)-1] == '0' {
			d.a = d.a[:len(d.a)-1]
		}
	}
	if len(d.a) == 0 && len(d.b) == 0 {
		return dec{}, true // zero: sign and exponent do not matter
	}
	if d.exp > expLimit {
		d.exp = expLimit
	} else if d.exp < -expLimit {
		d.exp = -expLimit
	}
	return d, true
}

func (d *dec) zero() bool   { return len(d.a)+len(d.b) == 0 }
func (d *dec) ndigits() int { return len(d.a) + len(d.b) }
func (d *dec) digit(i int) byte {
	if i < len(d.a) {
		return d.a[i]
	}
	return d.b[i-len(d.a)]
}

// cmpDec compares two decimals by value: -1, 0 or +1.
func cmpDec(x, y *dec) int {
	xz, yz := x.zero(), y.zero()
	switch {
	case xz && yz:
		return 0
	case xz:
		if y.neg {
			return 1
		}
		return -1
	case yz:
		if x.neg {
			return -1
		}
		return 1
	}
	if x.neg != y.neg {
		if x.neg {
			return -1
		}
		return 1
	}
	m := cmpMag(x, y)
	if x.neg {
		return -m
	}
	return m
}

func cmpMag(x, y *dec) int {
	if x.exp != y.exp {
		if x.exp > y.exp {
			return 1
		}
		return -1
	}
	nx, ny := x.ndigits(), y.ndigits()
	n := min(nx, ny)
	for i := 0; i < n; i++ {
		cx, cy := x.digit(i), y.digit(i)
		if cx != cy {
			if cx > cy {
				return 1
			}
			return -1
		}
	}
	switch {
	case nx > ny:
		return 1
	case nx < ny:
		return -1
	}
	return 0
}

// text renders the decimal as JSON number text ("0", "-0.125e3").
func (d *dec) text() string {
	if d.zero() {
		return "0"
	}
	buf := make([]byte, 0, d.ndigits()+24)
	if d.neg {
		buf = append(buf, '-')
	}
	buf = append(buf, '0', '.')
	buf = append(buf, d.a...)
	buf = append(buf, d.b...)
	buf = append(buf, 'e')
	buf = strconv.AppendInt(buf, d.exp, 10)
	return string(buf)
}

// own copies the digits so the decimal outlives the text it was read from.
func (d dec) own() dec {
	if d.zero() {
		return dec{}
	}
	digits := make([]byte, 0, d.ndigits())
	digits = append(digits, d.a...)
	digits = append(digits, d.b...)
	return dec{a: digits, neg: d.neg, exp: d.exp}
}

// integral reports whether the value has no fractional part.
func (d *dec) integral() bool { return d.zero() || int64(d.ndigits()) <= d.exp }
