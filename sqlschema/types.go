package sqlschema

import "svc/infer"

// temporalRank orders the upscaling chain YEAR→YEAR_MONTH→LOCAL_DATE→
// LOCAL_DATE_TIME→ZONED_DATE_TIME (docs/decisions/0024-sql-schema.md).
var temporalRank = map[infer.DataType]int{
	infer.Year: 1, infer.YearMonth: 2, infer.LocalDate: 3, infer.LocalDateTime: 4, infer.ZonedDateTime: 5,
}

// commonType resolves a slot's TypeSet to one dataType (docs/decisions/0024-sql-schema.md):
// NULL is ignored (only NULL → STRING); the set's numeric member is already
// the join of every number seen (DOUBLE with BIG_DECIMAL is
// UNBOUND_DECIMAL); temporals upscale; UUID with TIME_UUID is UUID;
// everything else mixed is STRING.
func commonType(t infer.TypeSet) string {
	var ts []infer.DataType
	for _, d := range t.Types() {
		if d != infer.Null {
			ts = append(ts, d)
		}
	}
	switch len(ts) {
	case 0:
		return "STRING"
	case 1:
		return ts[0].String()
	}
	allTemporal, hasTime, hasZoned, hasLocalDT, best := true, false, false, false, infer.Year
	for _, d := range ts {
		switch d {
		case infer.LocalTime:
			hasTime = true
		case infer.ZonedDateTime:
			hasZoned = true
		case infer.LocalDateTime:
			hasLocalDT = true
		}
		r, ok := temporalRank[d]
		if !ok && d != infer.LocalTime {
			allTemporal = false
		}
		if ok && r > temporalRank[best] {
			best = d
		}
	}
	if allTemporal {
		if hasZoned && (hasLocalDT || hasTime) {
			return "STRING"
		}
		if hasTime && temporalRank[best] < temporalRank[infer.LocalDateTime] {
			best = infer.LocalDateTime
		}
		return best.String()
	}
	if len(ts) == 2 && t.Has(infer.UUIDType) && t.Has(infer.TimeUUIDType) {
		return "UUID_TYPE"
	}
	return "STRING"
}

// positionsType is the common type of every primitive seen in an array.
func positionsType(a *infer.ArrayInfo) string {
	var u infer.TypeSet
	for _, p := range a.Positions {
		u = u.Union(p)
	}
	return commonType(u)
}

// multiType reports whether an array's positions carry different types
// (a MultiTypeArray), which flattens the column by default.
func multiType(a *infer.ArrayInfo) bool {
	first := ""
	for _, p := range a.Positions {
		if p == 0 {
			continue // only containers were seen here
		}
		if c := commonType(p); first == "" {
			first = c
		} else if c != first {
			return true
		}
	}
	return false
}

// primWidth is one past the last position that held a primitive: the
// number of positional columns an array needs.
func primWidth(a *infer.ArrayInfo) int {
	w := 0
	for i, p := range a.Positions {
		if p != 0 {
			w = i + 1
		}
	}
	return w
}
