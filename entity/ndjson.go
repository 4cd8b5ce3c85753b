package entity

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"time"

	"svc/idempotency"
	"svc/platform/apierr"
	"svc/platform/jsondoc"
	"svc/storage"
)

// StreamChunk is one committed transaction of a streamed create: the
// lines it holds (1-based, inclusive; blank lines count but create
// nothing) and how many entities it created.
type StreamChunk struct {
	TxID      [16]byte
	FirstLine int
	LastLine  int
	Entities  int
}

// StreamResult is the outcome of CreateStream. Chunks are durable in
// commit order. When Err is set, the chunk holding ErrLine (0 when the
// failure is not tied to a line, e.g. the connection broke) committed
// nothing, and nothing after it was read.
type StreamResult struct {
	Chunks   []StreamChunk
	Entities int
	Lines    int
	Err      *apierr.Error
	ErrLine  int
}

// BeforeChunk is called before each chunk is read; the HTTP layer uses
// it to extend the connection's read deadline, so a long stream is
// bounded per chunk rather than as a whole.
type BeforeChunk func()

// CreateStream serves POST /entity/ndjson/{name}/{version} (an svc
// extension): newline-delimited JSON objects of one model, read as they
// arrive and committed every window documents, so memory holds one chunk
// whatever the stream's length. A chunk is all or nothing; a bad line
// fails its chunk and ends the request, and the chunks before it stay
// committed. The rules of collection create apply (model locked,
// document validation, workflow).
func (s *Service) CreateStream(ctx context.Context, a Actor, key storage.ModelKey, r io.Reader, window int, before BeforeChunk) (*StreamResult, error) {
	if err := ValidWindow(window); err != nil {
		return nil, err
	}
	if _, err := s.lockedModel(ctx, a.Tenant, key); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	res := &StreamResult{}
	lines := newLineReader(br)
	keyed := idempotency.ClaimFrom(ctx) != nil
	for {
		if before != nil {
			before()
		}
		ch, err := lines.chunk(window)
		if err != nil {
			res.Lines = lines.n
			res.Err, res.ErrLine = streamErr(err), lineOf(err)
			return res, nil
		}
		res.Lines = lines.n
		if len(ch.docs) > 0 {
			m, err := s.lockedModel(ctx, a.Tenant, key)
			if err != nil {
				res.Err = AsAPI(err)
				return res, nil
			}
			items := make([]newItem, len(ch.docs))
			for i, d := range ch.docs {
				items[i] = newItem{model: m, data: d}
			}
			cctx := ctx
			if keyed {
				// A keyed request's answer so far, stored with each chunk.
				prev, first, last := *res, ch.lines[0], ch.lines[len(ch.lines)-1]
				prev.Chunks = slices.Clip(prev.Chunks)
				cctx = withProgress(ctx, func(txID [16]byte, ids [][16]byte) any {
					r := prev
					r.Chunks = append(r.Chunks, StreamChunk{TxID: txID, FirstLine: first, LastLine: last, Entities: len(ids)})
					r.Entities += len(ids)
					return &r
				})
			}
			c, err := s.commitCreates(cctx, a, items, locateItem)
			if err != nil {
				// A refused document names its own line; a workflow or
				// storage failure names the chunk's.
				var at *itemAt
				if errors.As(err, &at) && at.index >= 0 && at.index < len(ch.lines) {
					line := ch.lines[at.index]
					res.Err, res.ErrLine = atLine(AsAPI(err), line), line
					return res, nil
				}
				res.Err, res.ErrLine = AsAPI(err), ch.lines[0]
				if len(ch.lines) > 1 {
					// A workflow or storage failure belongs to the chunk,
					// not one line; name the chunk's lines.
					res.Err = withChunkLines(res.Err, ch.lines[0], ch.lines[len(ch.lines)-1])
				}
				return res, nil
			}
			res.Chunks = append(res.Chunks, StreamChunk{TxID: c.TxID, FirstLine: ch.lines[0], LastLine: ch.lines[len(ch.lines)-1], Entities: len(c.IDs)})
			res.Entities += len(c.IDs)
		}
		if ch.eof {
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			res.Err = AsAPI(err)
			return res, nil
		}
	}
}

// lineErr is a bad line of a stream.
type lineErr struct {
	line int
	err  *apierr.Error
}

func (e *lineErr) Error() string { return e.err.Error() }

func lineOf(err error) int {
	var le *lineErr
	if errors.As(err, &le) {
		return le.line
	}
	return 0
}

func streamErr(err error) *apierr.Error {
	var le *lineErr
	if errors.As(err, &le) {
		return le.err
	}
	return apierr.New(apierr.BadRequest, "reading the request body: "+err.Error())
}

// atLine names line in a refused document's error: the message starts
// "line N: " and the properties carry line.
func atLine(e *apierr.Error, line int) *apierr.Error {
	c := *e
	c.Message = "line " + strconv.Itoa(line) + ": " + e.Message
	c.Props = append(append([]apierr.Prop(nil), e.Props...), apierr.P("line", line))
	return &c
}

func withChunkLines(e *apierr.Error, first, last int) *apierr.Error {
	c := *e
	c.Props = append(append([]apierr.Prop(nil), e.Props...), apierr.P("firstLine", first), apierr.P("lastLine", last))
	return &c
}

// lineReader splits a stream into lines of at most MaxBodyBytes.
type lineReader struct {
	br *bufio.Reader
	n  int // lines read so far
}

func newLineReader(br *bufio.Reader) *lineReader { return &lineReader{br: br} }

type streamChunk struct {
	docs  [][]byte
	lines []int
	eof   bool
}

// chunk reads up to window non-blank lines. The documents of one chunk
// share one allocation, which the stored revisions may keep.
func (l *lineReader) chunk(window int) (streamChunk, error) {
	var ch streamChunk
	var arena []byte
	var ends []int
	for len(ch.lines) < window {
		line, err := l.line()
		if errors.Is(err, io.EOF) {
			ch.eof = true
			break
		}
		if err != nil {
			return ch, err
		}
		l.n++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' {
			return ch, &lineErr{l.n, apierr.New(apierr.BadRequest, "line "+strconv.Itoa(l.n)+": not a JSON object",
				apierr.P("line", l.n))}
		}
		if err := jsondoc.Check(line); err != nil {
			e := jsondoc.Problem(err, "line "+strconv.Itoa(l.n)+": not a JSON object", "line "+strconv.Itoa(l.n))
			e.Props = append(e.Props, apierr.P("line", l.n))
			return ch, &lineErr{l.n, e}
		}
		if arena == nil {
			// Documents of a stream tend to be alike: size the chunk's
			// arena from its first one.
			arena = make([]byte, 0, window*(len(line)+len(line)/4))
		}
		arena = append(arena, line...)
		ends = append(ends, len(arena))
		ch.lines = append(ch.lines, l.n)
	}
	ch.docs = make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		ch.docs[i] = arena[start:end:end]
		start = end
	}
	return ch, nil
}

// line returns the next line without its newline; io.EOF when the stream
// is done. The slice is valid until the next call.
func (l *lineReader) line() ([]byte, error) {
	b, err := l.br.ReadSlice('\n')
	if err == nil {
		return b, nil
	}
	if err == io.EOF {
		if len(b) == 0 {
			return nil, io.EOF
		}
		return b, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	long := append([]byte(nil), b...)
	for {
		b, err = l.br.ReadSlice('\n')
		long = append(long, b...)
		if len(long) > MaxBodyBytes {
			return nil, &lineErr{l.n + 1, apierr.New(apierr.BadRequest, "line "+strconv.Itoa(l.n+1)+": longer than 10 MiB",
				apierr.P("line", l.n+1))}
		}
		switch {
		case err == nil || err == io.EOF:
			return long, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// ExportStream prepares GET /entity/ndjson/{name}/{version} (an svc
// extension): it checks the model and compiles cond (a condition body;
// empty selects every entity) before anything is sent, and returns the
// walk that calls fn for every live entity as of at that cond selects.
// fn must not retain the entity; an error from fn ends the walk.
func (s *Service) ExportStream(ctx context.Context, tenant string, key storage.ModelKey, at time.Time, cond []byte) (func(ctx context.Context, fn func(e *storage.Entity) error) error, error) {
	if _, err := s.model(ctx, tenant, key); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(cond)) == 0 {
		return func(ctx context.Context, fn func(e *storage.Entity) error) error {
			return s.store.Scan(ctx, tenant, key, &at, fn)
		}, nil
	}
	c, err := s.condition(ctx, tenant, key, cond)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, fn func(e *storage.Entity) error) error {
		return s.scanMatching(ctx, tenant, key, &at, c, fn)
	}, nil
}
