package entity

import (
	"bufio"
	"bytes"
	"testing"

	json "github.com/goccy/go-json"
)

// FuzzStreamChunks splits arbitrary bodies the way the NDJSON create does:
// every chunk is at most the window, every document a JSON object that is
// one of the body's lines, line numbers rise, and a refused line is
// reported with its number.
func FuzzStreamChunks(f *testing.F) {
	for _, s := range []string{"{\"a\":1}\n{\"b\":2}\n", "\n\n{}\n  {} \n", "{\"a\":1}\n[1]\n", "{", "{\"a\":\"\\u0000\"}\n", "\xff\n{}"} {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, body []byte, w uint8) {
		window := int(w%8) + 1
		lr := newLineReader(bufio.NewReaderSize(bytes.NewReader(body), 16))
		lines := bytes.Split(body, []byte("\n"))
		last := 0
		for range len(body) + 2 {
			ch, err := lr.chunk(window)
			if err != nil {
				if l := lineOf(err); l <= last || l > len(lines) {
					t.Fatalf("error at line %d after line %d of %d: %v", l, last, len(lines), err)
				}
				return
			}
			if len(ch.docs) > window || len(ch.docs) != len(ch.lines) {
				t.Fatalf("chunk of %d docs, %d lines, window %d", len(ch.docs), len(ch.lines), window)
			}
			for i, d := range ch.docs {
				l := ch.lines[i]
				if l <= last || d[0] != '{' || !json.Valid(d) || !bytes.Equal(d, bytes.TrimSpace(lines[l-1])) {
					t.Fatalf("doc %q at line %d (after %d)", d, l, last)
				}
				last = l
			}
			if ch.eof {
				return
			}
		}
		t.Fatal("the stream did not end")
	})
}
