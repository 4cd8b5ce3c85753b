package streamdata

import (
	"testing"
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
