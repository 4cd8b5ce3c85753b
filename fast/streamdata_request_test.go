package fast

import (
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// TestStreamConfigDate: an imported createDate is an RFC 3339 instant or epoch
// milliseconds within the storable range; anything else is "no date".
func TestStreamConfigDate(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{`"2026-01-02T03:04:05.006Z"`, want, true},
		{`"2026-01-02T04:04:05.006+01:00"`, want, true},
		{` 1767323045006 `, want, true},
		{`null`, time.Time{}, false},
		{``, time.Time{}, false},
		{`"2026-01-02"`, time.Time{}, false},
		{`"x"`, time.Time{}, false},
		{`1.5`, time.Time{}, false},
		{`true`, time.Time{}, false},
		{`"99999-01-01T00:00:00Z"`, time.Time{}, false},
	} {
		got, ok := streamConfigDate(json.RawMessage(c.in))
		if ok != c.ok || !got.Equal(c.want) || (ok && got.Location() != time.UTC) {
			t.Errorf("streamConfigDate(%s) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
