package bulk

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	json "github.com/goccy/go-json"
)

// Checkpoint records which documents of each source are committed, so an
// interrupted import resumes without sending anything twice. Documents are
// numbered per source from 0 in reading order; done holds committed
// half-open ranges. It is written atomically (temporary file + rename).
type Checkpoint struct {
	path string
	mu   sync.Mutex
	st   checkpointState
}

type checkpointState struct {
	Version int                          `json:"version"`
	Model   string                       `json:"model"`
	Sources map[string]*checkpointSource `json:"sources"`
}

type checkpointSource struct {
	Size        int64    `json:"size"`
	Fingerprint string   `json:"fingerprint"`
	Done        [][2]int `json:"done"`
}

// LoadCheckpoint reads path, or starts an empty checkpoint when it does
// not exist. A checkpoint of another model is refused.
func LoadCheckpoint(path, model string) (*Checkpoint, error) {
	c := &Checkpoint{path: path, st: checkpointState{Version: 1, Model: model, Sources: map[string]*checkpointSource{}}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %w", path, err)
	}
	c.st = checkpointState{} // what the file says, not the defaults above
	if err := json.Unmarshal(b, &c.st); err != nil {
		return nil, fmt.Errorf("checkpoint %s is not readable: %w", path, err)
	}
	if c.st.Version != 1 {
		return nil, fmt.Errorf("checkpoint %s has version %d; this svc reads version 1 (remove it to start over)", path, c.st.Version)
	}
	if c.st.Model == "" {
		return nil, fmt.Errorf("checkpoint %s names no model; it was not written by svc import: remove it to start over", path)
	}
	if c.st.Model != model {
		return nil, fmt.Errorf("checkpoint %s belongs to model %s, not %s", path, c.st.Model, model)
	}
	if c.st.Sources == nil {
		c.st.Sources = map[string]*checkpointSource{}
	}
	for _, name := range sortedKeys(c.st.Sources) {
		if err := c.st.Sources[name].validate(); err != nil {
			return nil, fmt.Errorf("checkpoint %s, source %s: %w; it was not written by svc import (or was edited), "+
				"so which documents are committed is unknown: remove it to start over", path, name, err)
		}
	}
	return c, nil
}

// validate checks what Done and DoneCount rely on: committed ranges are
// non-empty, start at 0 or later, and come in increasing order without
// overlapping. Done's binary search answers "not committed" for documents
// of a range out of order, so such a checkpoint used to send committed
// documents again.
func (s *checkpointSource) validate() error {
	if s == nil {
		return errors.New("the record is null")
	}
	for k, r := range s.Done {
		switch {
		case r[0] < 0:
			return fmt.Errorf("range %d [%d, %d) starts before document 0", k+1, r[0], r[1])
		case r[1] <= r[0]:
			return fmt.Errorf("range %d [%d, %d) is empty or reversed", k+1, r[0], r[1])
		case k > 0 && r[0] < s.Done[k-1][0]:
			return fmt.Errorf("range %d [%d, %d) is out of order: it comes after [%d, %d)", k+1, r[0], r[1], s.Done[k-1][0], s.Done[k-1][1])
		case k > 0 && r[0] < s.Done[k-1][1]:
			return fmt.Errorf("range %d [%d, %d) overlaps range %d [%d, %d)", k+1, r[0], r[1], k, s.Done[k-1][0], s.Done[k-1][1])
		}
	}
	return nil
}

func sortedKeys(m map[string]*checkpointSource) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Attach binds a source to its record, checking that a file recorded
// before is unchanged (size and a hash of its first 64 KiB). Standard
// input cannot be resumed: its record is reset.
func (c *Checkpoint) Attach(s Source) error {
	fp := ""
	if s.Path != "-" {
		var err error
		if fp, err = fingerprint(s.Path); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.st.Sources[s.Path]
	switch {
	case rec == nil || s.Path == "-":
		c.st.Sources[s.Path] = &checkpointSource{Size: s.Size, Fingerprint: fp}
	case rec.Size != s.Size || rec.Fingerprint != fp:
		return fmt.Errorf("%s changed since the checkpoint was written; remove %s to start over", s.Path, c.path)
	}
	return nil
}

func fingerprint(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, f, 64<<10); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Done reports whether document i of source path is committed.
func (c *Checkpoint) Done(path string, i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.st.Sources[path]
	if rec == nil {
		return false
	}
	k := sort.Search(len(rec.Done), func(k int) bool { return rec.Done[k][1] > i })
	return k < len(rec.Done) && rec.Done[k][0] <= i
}

// DoneCount is how many documents of all sources are committed.
func (c *Checkpoint) DoneCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, rec := range c.st.Sources {
		for _, r := range rec.Done {
			n += r[1] - r[0]
		}
	}
	return n
}

// Mark records documents [lo, hi) of source path as committed. An empty
// range records nothing (a checkpoint holds no empty ranges).
func (c *Checkpoint) Mark(path string, lo, hi int) {
	if hi <= lo {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.st.Sources[path]
	if rec == nil {
		rec = &checkpointSource{}
		c.st.Sources[path] = rec
	}
	rec.Done = append(rec.Done, [2]int{lo, hi})
	sort.Slice(rec.Done, func(a, b int) bool { return rec.Done[a][0] < rec.Done[b][0] })
	merged := rec.Done[:1]
	for _, r := range rec.Done[1:] {
		last := &merged[len(merged)-1]
		if r[0] <= last[1] {
			last[1] = max(last[1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	rec.Done = merged
}

// Save writes the checkpoint atomically; one without a file (no
// --checkpoint) is kept in memory only.
func (c *Checkpoint) Save() error {
	if c.path == "" {
		return nil
	}
	c.mu.Lock()
	b, err := json.Marshal(&c.st)
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("encoding checkpoint: %w", err)
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing checkpoint: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("writing checkpoint: %w", err)
	}
	return nil
}
