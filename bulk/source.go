// Package bulk is the client side of svc's bulk tools: `svc import` reads
// NDJSON or JSON-array files (plain or gzip, a directory of them, or
// standard input) and streams them to a running svc over several
// connections; `svc export` streams a model's entities out again, and
// `export --all` / `import --restore` carry a tenant's models, workflows
// and entities across. It talks to svc over its HTTP API only.
package bulk

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	json "github.com/goccy/go-json"
)

// Source is one input: a file, or standard input ("-").
type Source struct {
	Path string
	Size int64 // bytes on disk (compressed for .gz); 0 when unknown
}

// Sources expands paths: a directory contributes its .ndjson, .jsonl and
// .json files (and their .gz forms) in name order; no path means standard
// input.
func Sources(paths []string) ([]Source, error) {
	if len(paths) == 0 {
		return []Source{{Path: "-"}}, nil
	}
	var out []Source
	for _, p := range paths {
		if p == "-" {
			out = append(out, Source{Path: "-"})
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", p, err)
		}
		if !st.IsDir() {
			out = append(out, Source{Path: p, Size: st.Size()})
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("input directory %s: %w", p, err)
		}
		var names []string
		for _, e := range ents {
			if !e.IsDir() && isDataFile(e.Name()) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			fp := filepath.Join(p, n)
			st, err := os.Stat(fp)
			if err != nil {
				return nil, fmt.Errorf("input %s: %w", fp, err)
			}
			out = append(out, Source{Path: fp, Size: st.Size()})
		}
	}
	return out, nil
}

func isDataFile(name string) bool {
	name = strings.TrimSuffix(name, ".gz")
	for _, ext := range []string{".ndjson", ".jsonl", ".json"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// Doc is one document of a source: its bytes on one line (valid until the
// next call of Next), and where it came from (1-based line of an NDJSON
// file, or 1-based element of a JSON array), for error messages.
type Doc struct {
	Data []byte
	Line int
}

// Reader yields the documents of one source in order.
type Reader struct {
	counted *countingReader
	closers []io.Closer
	next    func() (Doc, error)
}

// Consumed is how many bytes of the source (as stored: compressed for
// .gz) have been read so far.
func (r *Reader) Consumed() int64 { return r.counted.n.Load() }

// Close releases the source.
func (r *Reader) Close() error {
	var first error
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Open opens a source and detects its form: a first non-blank byte '['
// is a JSON array of objects, anything else NDJSON. stdin is read once.
func Open(s Source, stdin io.Reader) (*Reader, error) {
	r := &Reader{}
	var raw io.Reader
	if s.Path == "-" {
		raw = stdin
	} else {
		f, err := os.Open(s.Path)
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", s.Path, err)
		}
		r.closers = append(r.closers, f)
		raw = f
	}
	r.counted = &countingReader{r: raw}
	var in io.Reader = r.counted
	br := bufio.NewReaderSize(in, 256<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("%s: not a readable gzip stream: %w", s.Path, err)
		}
		r.closers = append(r.closers, gz)
		br = bufio.NewReaderSize(gz, 256<<10)
	}
	first, err := firstByte(br)
	if err != nil && !errors.Is(err, io.EOF) {
		r.Close()
		return nil, fmt.Errorf("reading %s: %w", s.Path, err)
	}
	if first == '[' {
		r.next = arrayDocs(br)
	} else {
		r.next = ndjsonDocs(br)
	}
	return r, nil
}

// Next returns the next document; io.EOF at the end.
func (r *Reader) Next() (Doc, error) { return r.next() }

func firstByte(br *bufio.Reader) (byte, error) {
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil {
			return 0, err
		}
		switch c := b[i-1]; c {
		case ' ', '\t', '\r', '\n':
			continue
		default:
			return c, nil
		}
	}
}

// MaxDocBytes bounds one document, as the server does.
const MaxDocBytes = 10 << 20

func ndjsonDocs(br *bufio.Reader) func() (Doc, error) {
	line := 0
	return func() (Doc, error) {
		for {
			b, err := readLine(br)
			if err != nil {
				return Doc{}, err
			}
			line++
			b = bytes.TrimSpace(b)
			if len(b) == 0 {
				continue
			}
			return Doc{Data: b, Line: line}, nil
		}
	}
}

// readLine returns one line; io.EOF when none. A line that fits the
// reader's buffer is returned in place, valid until the next read; a
// longer one is copied.
func readLine(br *bufio.Reader) ([]byte, error) {
	b, err := br.ReadSlice('\n')
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, io.EOF):
		if len(b) == 0 {
			return nil, io.EOF
		}
		return b, nil
	case !errors.Is(err, bufio.ErrBufferFull):
		return nil, err
	}
	out := append([]byte(nil), b...)
	for {
		b, err := br.ReadSlice('\n')
		out = append(out, b...)
		if len(out) > MaxDocBytes {
			return nil, fmt.Errorf("a line is longer than %d MiB", MaxDocBytes>>20)
		}
		switch {
		case err == nil:
			return out, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(out) > 0:
			return out, nil
		default:
			return nil, err
		}
	}
}

func arrayDocs(br *bufio.Reader) func() (Doc, error) {
	dec := json.NewDecoder(br)
	n := 0
	started := false
	return func() (Doc, error) {
		if !started {
			started = true
			if _, err := dec.Token(); err != nil {
				return Doc{}, fmt.Errorf("element 1: %w", err)
			}
		}
		if !dec.More() {
			if _, err := dec.Token(); err != nil {
				return Doc{}, fmt.Errorf("after element %d: %w", n, err)
			}
			return Doc{}, io.EOF
		}
		n++
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Doc{}, fmt.Errorf("element %d: %w", n, err)
		}
		// A document travels as one NDJSON line.
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return Doc{}, fmt.Errorf("element %d: %w", n, err)
		}
		return Doc{Data: buf.Bytes(), Line: n}, nil
	}
}
