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
	if err := json.Unmarshal(b, &c.st); err != nil {
		return nil, fmt.Errorf("checkpoint %s is not readable: %w", path, err)
	}
	if c.st.Model != model {
		return nil, fmt.Errorf("checkpoint %s belongs to model %s, not %s", path, c.st.Model, model)
	}
	if c.st.Sources == nil {
		c.st.Sources = map[string]*checkpointSource{}
	}
	return c, nil
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

// Mark records documents [lo, hi) of source path as committed.
func (c *Checkpoint) Mark(path string, lo, hi int) {
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
