package storage

import (
	"math"
	"time"
)

// Every engine keeps instants as int64 nanoseconds since the epoch
// (at_ns columns, UnixNano): an instant outside [MinInstant, MaxInstant]
// would wrap around and read as a time centuries away (a pointInTime in
// 2300 as 1715, where nothing exists yet). Instants from requests are
// checked against this range where they are parsed and refused with 400.
var (
	// MinInstant is 1677-09-21T00:12:43.145224192Z.
	MinInstant = time.Unix(0, math.MinInt64).UTC()
	// MaxInstant is 2262-04-11T23:47:16.854775807Z.
	MaxInstant = time.Unix(0, math.MaxInt64).UTC()
)

// InstantInRange reports whether t can be stored and compared without
// overflow.
func InstantInRange(t time.Time) bool {
	return !t.Before(MinInstant) && !t.After(MaxInstant)
}

// InstantRangeText names the range in messages and documentation.
const InstantRangeText = "from 1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z"
