package bulk

import (
	"bytes"
	"errors"
	"io"
	"testing"

	json "github.com/goccy/go-json"
)

// FuzzSourceReader feeds arbitrary input (NDJSON, JSON arrays, gzip) to
// the import reader: it must end, never panic, and every document of an
// array source must be one compact line of valid JSON.
func FuzzSourceReader(f *testing.F) {
	for _, s := range []string{"{\"a\":1}\n{\"b\":2}\n", "[{\"a\":1},\n {\"b\": [1, 2]}]", "  \n\n{}", "[", "[{\"a\":1},]", "\x1f\x8b\x08", "[1,\"x\",null]",
		"{\"a\":\"line\\nbreak\"}\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := Open(Source{Path: "-"}, bytes.NewReader(in))
		if err != nil {
			return
		}
		defer r.Close()
		array := bytes.HasPrefix(bytes.TrimLeft(in, " \t\r\n"), []byte("["))
		last := 0
		// gzip expands at most about 1032 to 1.
		for range 1100*len(in) + 2 {
			d, err := r.Next()
			if errors.Is(err, io.EOF) || err != nil {
				return
			}
			if d.Line <= last {
				t.Fatalf("line %d after %d", d.Line, last)
			}
			last = d.Line
			if array && (!json.Valid(d.Data) || bytes.ContainsAny(d.Data, "\n")) {
				t.Fatalf("array element %d is not one line of JSON: %q", d.Line, d.Data)
			}
		}
		t.Fatal("reader did not end")
	})
}
