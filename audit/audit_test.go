package audit

import (
	"errors"
	"testing"
	"time"

	"svc/platform/apierr"
)

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	for _, s := range []string{"2026-01-02T03:04:05.123456789Z", "2026-01-02T04:04:05.123456789+01:00",
		"2026-01-02T04:04:05.123456789 01:00", "2026-01-02T03:04:05.123456789"} {
		got, err := ParseTime("fromUtcTime", s)
		if err != nil || !got.Equal(want) {
			t.Errorf("%q: %v %v", s, got, err)
		}
	}
	// No rounding: a millisecond value is that instant exactly.
	if got, _ := ParseTime("toUtcTime", "2026-01-02T03:04:05.123Z"); got.Nanosecond() != 123000000 {
		t.Errorf("rounded: %v", got)
	}
	for _, s := range []string{"", "yesterday", "2026-13-01T00:00:00Z", "2026-01-02"} {
		_, err := ParseTime("toUtcTime", s)
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != apierr.BadRequest || len(e.Props) == 0 || e.Props[0] != apierr.P("parameter", "toUtcTime") {
			t.Errorf("%q: %v", s, err)
		}
	}
}

func TestParseLimitCursor(t *testing.T) {
	for raw, want := range map[string]int{"1": 1, "20": 20, "1000": 1000, "1001": 1000, "99999999999999": 1000} {
		if n, err := ParseLimit(raw, true); err != nil || n != want {
			t.Errorf("limit %q: %d %v", raw, n, err)
		}
	}
	if n, err := ParseLimit("", false); err != nil || n != DefaultLimit {
		t.Errorf("absent limit: %d %v", n, err)
	}
	for _, raw := range []string{"", "0", "-1", "x", "1.5", "999999999999999999999999"} {
		if _, err := ParseLimit(raw, true); err == nil {
			t.Errorf("limit %q accepted", raw)
		}
	}
	for raw, want := range map[string]int{"": 0, "3": 3, "-3": 0, "x": 0, "99999999999": 0} {
		if got := ParseCursor(raw); got != want {
			t.Errorf("cursor %q: %d want %d", raw, got, want)
		}
	}
}

// FuzzQueryParams: the parameter parsers never panic, and what they accept
// is in range.
func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{"2026-01-02T03:04:05Z", "20", "0", "-1", "2026-01-02T04:04:05.1 01:00", "\x00", "9999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := ParseTime("fromUtcTime", s); err != nil {
			if _, ok := apierr.As(err); !ok {
				t.Fatalf("%q: not an API error: %v", s, err)
			}
		}
		if n, err := ParseLimit(s, true); err == nil && (n < 1 || n > MaxLimit) {
			t.Fatalf("limit %q → %d", s, n)
		}
		if c := ParseCursor(s); c < 0 {
			t.Fatalf("cursor %q → %d", s, c)
		}
	})
}
