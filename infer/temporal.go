package infer

// classifyString sniffs the ISO-8601 shapes of docs/decisions/0010-schema-inference.md, in this
// order: zoned date-time, local date-time, local date, local time, year-month.
// All-digit strings stay STRING (no YEAR sniff), and so do UUIDs,
// booleans and numbers written as strings.
func classifyString(s []byte) DataType {
	n := len(s)
	if n < 5 || n > 64 { // shortest shape is HH:mm; longest is far below 64
		return String
	}
	if n >= 10 && isDate(s[:10]) {
		if n == 10 {
			return LocalDate
		}
		if s[10] != 'T' {
			return String
		}
		rest := s[11:]
		t := timeLen(rest)
		if t == 0 {
			return String
		}
		switch {
		case t == len(rest):
			return LocalDateTime
		case isOffset(rest[t:]):
			return ZonedDateTime
		}
		return String
	}
	if t := timeLen(s); t == n {
		return LocalTime
	}
	if n == 7 && isYearMonth(s) {
		return YearMonth
	}
	return String
}

// isDate matches yyyy-MM-dd naming a real calendar day.
func isDate(s []byte) bool {
	if len(s) != 10 || !isYearMonth(s[:7]) || s[7] != '-' || !isDigit(s[8]) || !isDigit(s[9]) {
		return false
	}
	year := num(s[0:4])
	month := num(s[5:7])
	day := num(s[8:10])
	return day >= 1 && day <= daysIn(year, month)
}

// isYearMonth matches yyyy-MM with a month 01–12.
func isYearMonth(s []byte) bool {
	if len(s) != 7 || s[4] != '-' {
		return false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6} {
		if !isDigit(s[i]) {
			return false
		}
	}
	m := num(s[5:7])
	return m >= 1 && m <= 12
}

// timeLen returns how many leading bytes of s form HH:mm[:ss[.f{1,9}]], or 0.
func timeLen(s []byte) int {
	if len(s) < 5 || !twoDigits(s[0:2], 23) || s[2] != ':' || !twoDigits(s[3:5], 59) {
		return 0
	}
	if len(s) < 8 || s[5] != ':' {
		return 5
	}
	if !twoDigits(s[6:8], 59) {
		return 0
	}
	i := 8
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) && j-i <= 9 {
			j++
		}
		if j == i+1 || (j < len(s) && isDigit(s[j])) {
			return 0 // "." without digits, or more than nine fraction digits
		}
		i = j
	}
	return i
}

// isOffset matches Z or ±hh:mm.
func isOffset(s []byte) bool {
	if len(s) == 1 {
		return s[0] == 'Z'
	}
	return len(s) == 6 && (s[0] == '+' || s[0] == '-') &&
		twoDigits(s[1:3], 23) && s[3] == ':' && twoDigits(s[4:6], 59)
}

func twoDigits(s []byte, max int) bool {
	return isDigit(s[0]) && isDigit(s[1]) && num(s) <= max
}

func num(s []byte) int {
	v := 0
	for _, c := range s {
		v = v*10 + int(c-'0')
	}
	return v
}

func daysIn(year, month int) int {
	switch month {
	case 1, 3, 5, 7, 8, 10, 12:
		return 31
	case 4, 6, 9, 11:
		return 30
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 0
}
