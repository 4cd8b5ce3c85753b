package predicate

import "time"

// classifyTemporal reads text as its most specific temporal subtype:
// ZONED_DATE_TIME (RFC 3339 with Z or ±hh:mm, seconds optional) >
// LOCAL_DATE_TIME (yyyy-MM-ddTHH:mm[:ss[.f]]) > LOCAL_DATE (yyyy-MM-dd) >
// LOCAL_TIME (HH:mm[:ss[.f]]) > YEAR_MONTH (yyyy-MM) > YEAR (4 to 9 digits).
// The value is the start of the period as Unix milliseconds (floored, UTC
// for zone-less forms), or milliseconds of the day for LOCAL_TIME. Comparing
// period starts this way is what the up- and down-scaling rules of temporal
// operands (docs/decisions/0020-conditions.md) amount to: ">= 2024-09-09" against a YEAR stored as "2024" compares
// 2024-01-01 with 2024-09-09 and does not match, as "> 2024" would not.
func classifyTemporal(s []byte) (DataType, int64, bool) {
	n := len(s)
	if n >= 4 && n <= 9 && allDigits(s) {
		y := atoiDigits(s)
		return TypeYear, time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), true
	}
	if n >= 5 && s[2] == ':' {
		h, m, sec, ns, rest, ok := readClock(s)
		if !ok || len(rest) != 0 {
			return 0, 0, false
		}
		return TypeLocalTime, int64(h)*3_600_000 + int64(m)*60_000 + int64(sec)*1000 + int64(ns/1_000_000), true
	}
	if n < 7 || !digits(s[:4]) || s[4] != '-' || !digits(s[5:7]) {
		return 0, 0, false
	}
	y, mo := atoiDigits(s[:4]), atoiDigits(s[5:7])
	if mo < 1 || mo > 12 {
		return 0, 0, false
	}
	if n == 7 {
		return TypeYearMonth, time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, time.UTC).UnixMilli(), true
	}
	if n < 10 || s[7] != '-' || !digits(s[8:10]) {
		return 0, 0, false
	}
	d := atoiDigits(s[8:10])
	if d < 1 || d > daysIn(y, mo) {
		return 0, 0, false
	}
	if n == 10 {
		return TypeLocalDate, time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC).UnixMilli(), true
	}
	if s[10] != 'T' && s[10] != 't' {
		return 0, 0, false
	}
	h, mi, sec, ns, rest, ok := readClock(s[11:])
	if !ok {
		return 0, 0, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC)
	if len(rest) == 0 {
		return TypeLocalDateTime, t.UnixMilli(), true
	}
	if len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z') {
		return TypeZonedDateTime, t.UnixMilli(), true
	}
	if len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && digits(rest[1:3]) && rest[3] == ':' && digits(rest[4:6]) {
		oh, om := atoiDigits(rest[1:3]), atoiDigits(rest[4:6])
		if oh > 18 || om > 59 {
			return 0, 0, false
		}
		off := time.Duration(oh)*time.Hour + time.Duration(om)*time.Minute
		if rest[0] == '+' {
			off = -off
		}
		return TypeZonedDateTime, t.Add(off).UnixMilli(), true
	}
	return 0, 0, false
}

// readClock reads HH:mm[:ss[.fffffffff]] and returns what follows.
func readClock(s []byte) (h, m, sec, ns int, rest []byte, ok bool) {
	if len(s) < 5 || !digits(s[:2]) || s[2] != ':' || !digits(s[3:5]) {
		return
	}
	h, m = atoiDigits(s[:2]), atoiDigits(s[3:5])
	if h > 23 || m > 59 {
		return
	}
	s = s[5:]
	if len(s) >= 3 && s[0] == ':' && digits(s[1:3]) {
		sec = atoiDigits(s[1:3])
		if sec > 59 {
			return
		}
		s = s[3:]
		if len(s) >= 2 && s[0] == '.' {
			i := 1
			scale := 100_000_000
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				if i > 9 {
					return
				}
				ns += int(s[i]-'0') * scale
				scale /= 10
				i++
			}
			if i == 1 {
				return
			}
			s = s[i:]
		}
	}
	return h, m, sec, ns, s, true
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func digits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func allDigits(s []byte) bool { return len(s) > 0 && digits(s) }

func atoiDigits(s []byte) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
