package streamdata

import (
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// TestParseID: config ids are canonical 36-character UUIDs; anything else
// is 400 naming the parameter.
func TestParseID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"0d9e8f1c-1f7a-11ef-9c3b-0242ac120002", true},
		{"0D9E8F1C-1F7A-11EF-9C3B-0242AC120002", true},
		{"0d9e8f1c1f7a11ef9c3b0242ac120002", false},
		{"{0d9e8f1c-1f7a-11ef-9c3b-0242ac120002}", false},
		{"urn:uuid:0d9e8f1c-1f7a-11ef-9c3b-0242ac120002", false},
		{"", false},
		{"x", false},
	} {
		_, err := parseID(c.in, "id")
		if (err == nil) != c.ok {
			t.Errorf("parseID(%q): %v, want ok=%v", c.in, err, c.ok)
		}
	}
}

// TestParseDate: an imported createDate is an RFC 3339 instant or epoch
// milliseconds within the storable range; anything else is "no date".
func TestParseDate(t *testing.T) {
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
		got, ok := parseDate(json.RawMessage(c.in))
		if ok != c.ok || !got.Equal(c.want) || (ok && got.Location() != time.UTC) {
			t.Errorf("parseDate(%s) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
