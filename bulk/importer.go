package bulk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"
)

// ModelRef names a model: entityName and modelVersion.
type ModelRef struct {
	Name    string
	Version int
}

// ParseModelRef reads NAME/VERSION.
func ParseModelRef(s string) (ModelRef, error) {
	name, ver, ok := strings.Cut(s, "/")
	v, err := strconv.Atoi(ver)
	if !ok || name == "" || err != nil || v < 1 {
		return ModelRef{}, fmt.Errorf("model %q: want NAME/VERSION, e.g. orders/1", s)
	}
	return ModelRef{name, v}, nil
}

func (m ModelRef) String() string { return m.Name + "/" + strconv.Itoa(m.Version) }

func (m ModelRef) path() string {
	return url.PathEscape(m.Name) + "/" + strconv.Itoa(m.Version)
}

// ImportOptions configure Import.
type ImportOptions struct {
	Model   ModelRef
	Sources []Source
	Stdin   io.Reader
	// Batch is documents per request; each request is one transaction
	// (at most 1000), so a batch is committed whole or not at all.
	Batch       int
	Connections int
	// Checkpoint is the resume file; empty disables resuming.
	Checkpoint string
	// CreateModel infers the model from the first Sample documents and
	// locks it, unless it is locked already.
	CreateModel bool
	Sample      int
	// Data, when set, turns each source document into the document to
	// create (restore reads envelopes and sends their data).
	Data func(doc []byte) ([]byte, error)
	// Progress, when set, is started and finished by Import.
	Progress *Progress
}

// ImportResult counts what an import did.
type ImportResult struct {
	Created  int64 // documents committed by this run
	Skipped  int64 // documents a checkpoint had committed before
	Requests int64
}

// ErrInterrupted ends an import whose context was cancelled; what was
// committed is in the checkpoint.
var ErrInterrupted = errors.New("interrupted")

// BadDocError names the first document svc refused.
type BadDocError struct {
	Path   string
	Line   int // 0 when the failure concerns a whole batch
	First  int // the batch's first and last lines, when Line is 0
	Last   int
	Detail string
}

func (e *BadDocError) Error() string {
	where := e.Path
	if where == "-" {
		where = "stdin"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", where, e.Line, e.Detail)
	}
	return fmt.Sprintf("%s:%d-%d: %s", where, e.First, e.Last, e.Detail)
}

func (e *BadDocError) pos() int {
	if e.Line > 0 {
		return e.Line
	}
	return e.First
}

type batch struct {
	src   int
	path  string
	lo    int   // first document ordinal in the source
	lines []int // source line of each document
	body  bytes.Buffer
	// span is the input bytes the batch stands for (its documents and
	// any skipped or blank lines before them), counted as done when the
	// batch commits.
	span int64
}

// Import streams the sources to svc's NDJSON create, Connections requests
// in flight, and records every committed batch in the checkpoint. On
// cancellation it stops reading, lets the requests in flight finish,
// saves the checkpoint and returns ErrInterrupted; a refused document
// ends it with a *BadDocError for the first such document in input order.
func Import(ctx context.Context, c *Client, o ImportOptions) (*ImportResult, error) {
	if o.Batch <= 0 || o.Batch > 1000 {
		return nil, fmt.Errorf("batch size %d: want 1..1000 (one transaction per request)", o.Batch)
	}
	if o.Connections <= 0 {
		o.Connections = 1
	}
	cp, err := openCheckpoint(o.Checkpoint, o.Model)
	if err != nil {
		return nil, err
	}
	for _, s := range o.Sources {
		if err := cp.Attach(s); err != nil {
			return nil, err
		}
	}
	if o.CreateModel {
		if err := createModel(ctx, c, o); err != nil {
			return nil, err
		}
	}

	res := &ImportResult{}
	// done counts the input bytes of committed batches (and of skipped
	// lines no batch follows): the progress percentage is of documents
	// svc committed, not of bytes read ahead of the requests in flight.
	var done atomic.Int64
	if p := o.Progress; p != nil {
		p.Bytes = done.Load
		p.Start()
	}

	// Requests in flight finish after an interrupt: their outcome must
	// reach the checkpoint, or a resume would send them again.
	sendCtx := context.WithoutCancel(ctx)
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }

	var mu sync.Mutex
	var bad *BadDocError
	var badSrc int
	var fatal error
	fail := func(src int, err error) {
		mu.Lock()
		defer mu.Unlock()
		var bd *BadDocError
		if errors.As(err, &bd) {
			if bad == nil || src < badSrc || (src == badSrc && bd.pos() < bad.pos()) {
				bad, badSrc = bd, src
			}
		} else if fatal == nil {
			fatal = err
		}
		halt()
	}

	batches := make(chan *batch, o.Connections)
	var wg sync.WaitGroup
	for range o.Connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				select {
				case <-stop:
					continue // a batch failed: send nothing after it
				default:
				}
				n, err := sendBatch(sendCtx, c, o.Model, b)
				atomic.AddInt64(&res.Requests, 1)
				if err != nil {
					fail(b.src, err)
					continue
				}
				cp.Mark(b.path, b.lo, b.lo+n)
				done.Add(b.span)
				atomic.AddInt64(&res.Created, int64(n))
				if o.Progress != nil {
					o.Progress.Docs.Add(int64(n))
				}
			}
		}()
	}

	// The checkpoint is saved every second while the import runs.
	saveDone := make(chan struct{})
	var saveErr error
	go func() {
		defer close(saveDone)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if err := cp.Save(); err != nil {
					saveErr = err
				}
			}
		}
	}()

	readErr := produce(ctx, o, cp, stop, batches, &done, &res.Skipped)
	close(batches)
	wg.Wait()
	halt()
	<-saveDone
	if err := cp.Save(); err != nil && saveErr == nil {
		saveErr = err
	}
	outcome := func(s string) {
		if o.Progress != nil {
			o.Progress.Finish(s)
		}
	}
	switch {
	case bad != nil:
		outcome("")
		return res, bad
	case fatal != nil:
		outcome("")
		return res, fatal
	case readErr != nil:
		outcome("")
		return res, readErr
	case saveErr != nil:
		outcome("")
		return res, saveErr
	case ctx.Err() != nil:
		outcome("")
		return res, ErrInterrupted
	}
	outcome("")
	return res, nil
}

// openCheckpoint loads the resume file, or keeps one in memory only.
func openCheckpoint(path string, m ModelRef) (*Checkpoint, error) {
	if path == "" {
		return &Checkpoint{st: checkpointState{Version: 1, Model: m.String(), Sources: map[string]*checkpointSource{}}}, nil
	}
	return LoadCheckpoint(path, m.String())
}

// produce reads the sources in order into batches; it stops early on
// cancellation or when a worker failed.
func produce(ctx context.Context, o ImportOptions, cp *Checkpoint, stop <-chan struct{}, out chan<- *batch,
	done *atomic.Int64, skipped *int64) error {
	for si, s := range o.Sources {
		r, err := Open(s, o.Stdin)
		if err != nil {
			return err
		}
		var b *batch
		var mark int64 // r.Consumed() at the last batch handed out
		flush := func() bool {
			if b == nil {
				return true
			}
			now := r.Consumed()
			b.span, mark = now-mark, now
			select {
			case out <- b:
				b = nil
				return true
			case <-stop:
				return false
			case <-ctx.Done():
				return false
			}
		}
		for i := 0; ; i++ {
			if ctx.Err() != nil {
				r.Close()
				return nil
			}
			d, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.Close()
				return fmt.Errorf("%s: %w", displayPath(s.Path), err)
			}
			if s.Path != "-" && cp.Done(s.Path, i) {
				*skipped++
				if !flush() {
					r.Close()
					return nil
				}
				continue
			}
			data := d.Data
			if o.Data != nil {
				if data, err = o.Data(data); err != nil {
					r.Close()
					return &BadDocError{Path: s.Path, Line: d.Line, Detail: err.Error()}
				}
			}
			if b == nil {
				b = &batch{src: si, path: s.Path, lo: i, lines: make([]int, 0, o.Batch)}
				b.body.Grow(o.Batch * (len(data) + len(data)/4 + 1))
			}
			b.body.Write(data)
			b.body.WriteByte('\n')
			b.lines = append(b.lines, d.Line)
			if len(b.lines) == o.Batch && !flush() {
				r.Close()
				return nil
			}
		}
		ok := flush()
		if ok {
			// Skipped or blank lines after the last batch.
			done.Add(r.Consumed() - mark)
		}
		r.Close()
		if !ok {
			return nil
		}
	}
	return nil
}

func displayPath(p string) string {
	if p == "-" {
		return "stdin"
	}
	return p
}

// sendBatch posts one batch as one transaction and returns how many
// documents were committed (all of them, or an error).
func sendBatch(ctx context.Context, c *Client, m ModelRef, b *batch) (int, error) {
	path := "/entity/ndjson/" + m.path() + "?transactionWindow=" + strconv.Itoa(len(b.lines))
	body := bytes.NewReader(b.body.Bytes())
	var ans struct {
		EntitiesCreated int `json:"entitiesCreated"`
	}
	err := retry(ctx, 5, func() error {
		resp, err := c.DoKeyed(ctx, "POST", path, body, "application/x-ndjson", batchKey(m, b))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(&ans)
	})
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == 400 {
		bd := &BadDocError{Path: b.path, Detail: ae.Detail, First: b.lines[0], Last: b.lines[len(b.lines)-1]}
		if l, ok := ae.Props["line"].(float64); ok && int(l) >= 1 && int(l) <= len(b.lines) {
			bd.Line = b.lines[int(l)-1]
			bd.Detail = strings.Replace(bd.Detail, "line "+strconv.Itoa(int(l))+": ", "", 1)
		}
		return 0, bd
	}
	if err != nil {
		return 0, fmt.Errorf("%s lines %d-%d: %w", displayPath(b.path), b.lines[0], b.lines[len(b.lines)-1], err)
	}
	if ans.EntitiesCreated != len(b.lines) {
		return 0, fmt.Errorf("%s lines %d-%d: svc created %d of %d documents", displayPath(b.path), b.lines[0], b.lines[len(b.lines)-1],
			ans.EntitiesCreated, len(b.lines))
	}
	return len(b.lines), nil
}

// batchKey is the Idempotency-Key of a batch: derived from the model, the
// file and the batch's document range, so a resumed import (same batch
// size) sends the same key for a batch whose answer it never recorded and
// svc replays instead of creating its documents again
// (docs/decisions/0040-idempotency-key.md). Standard input cannot be
// resumed; its batches get keys of this run only.
func batchKey(m ModelRef, b *batch) string {
	path := b.path
	if path == "-" {
		path = "-" + stdinRun
	} else if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	h := sha256.Sum256([]byte(m.String() + "\x00" + path + "\x00" + strconv.Itoa(b.lo) + "\x00" + strconv.Itoa(b.lo+len(b.lines))))
	return "svc-import-" + hex.EncodeToString(h[:16])
}

var stdinRun = strconv.FormatInt(time.Now().UnixNano(), 36)

// createModel infers the model from the first documents and locks it; a
// locked model is left as it is.
func createModel(ctx context.Context, c *Client, o ImportOptions) error {
	var st struct {
		CurrentState string `json:"currentState"`
	}
	err := c.JSON(ctx, "GET", "/model/export/SIMPLE_VIEW/"+o.Model.path(), nil, &st)
	var ae *APIError
	switch {
	case err == nil && st.CurrentState == "LOCKED":
		return nil
	case err != nil && !(errors.As(err, &ae) && ae.Status == 404):
		return fmt.Errorf("reading model %s: %w", o.Model, err)
	}
	sample := o.Sample
	if sample <= 0 {
		sample = 100
	}
	n := 0
	for _, s := range o.Sources {
		if s.Path == "-" {
			return errors.New("--create-model needs files: standard input can be read only once")
		}
		r, err := Open(s, nil)
		if err != nil {
			return err
		}
		for n < sample {
			d, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.Close()
				return fmt.Errorf("%s: %w", s.Path, err)
			}
			data := d.Data
			if o.Data != nil {
				if data, err = o.Data(data); err != nil {
					r.Close()
					return &BadDocError{Path: s.Path, Line: d.Line, Detail: err.Error()}
				}
			}
			if err := c.JSON(ctx, "POST", "/model/import/JSON/SAMPLE_DATA/"+o.Model.path(), data, nil); err != nil {
				r.Close()
				return fmt.Errorf("inferring model %s from %s:%d: %w", o.Model, s.Path, d.Line, err)
			}
			n++
		}
		r.Close()
		if n >= sample {
			break
		}
	}
	if n == 0 {
		return errors.New("--create-model: the input has no document")
	}
	if err := c.JSON(ctx, "PUT", "/model/"+o.Model.path()+"/lock", nil, nil); err != nil {
		return fmt.Errorf("locking model %s: %w", o.Model, err)
	}
	return nil
}
