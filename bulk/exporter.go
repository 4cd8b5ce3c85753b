package bulk

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	json "github.com/goccy/go-json"
)

// ExportOptions configure Export.
type ExportOptions struct {
	Model ModelRef
	// At is the point in time (RFC 3339); empty means now, as svc fixes
	// it when the request arrives.
	At string
	// Condition is a search condition (JSON); empty exports everything.
	Condition string
	Out       io.Writer
	Progress  *Progress
}

// Export streams a model's entity envelopes as NDJSON to o.Out and returns
// how many it wrote and the point in time they were read at.
func Export(ctx context.Context, c *Client, o ExportOptions) (int64, string, error) {
	q := url.Values{}
	if o.At != "" {
		q.Set("pointInTime", o.At)
	}
	if o.Condition != "" {
		q.Set("condition", o.Condition)
	}
	path := "/entity/ndjson/" + o.Model.path()
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	if p := o.Progress; p != nil && o.Condition == "" && o.At == "" {
		var st struct {
			Count int64 `json:"count"`
		}
		if c.JSON(ctx, "GET", "/entity/stats/"+o.Model.path(), nil, &st) == nil {
			p.TotalDoc = st.Count
		}
	}
	resp, err := c.Do(ctx, "GET", path, nil, "")
	if err != nil {
		return 0, "", fmt.Errorf("exporting %s: %w", o.Model, err)
	}
	defer resp.Body.Close()
	at := resp.Header.Get("X-Point-In-Time")
	counted := &countingReader{r: resp.Body}
	if p := o.Progress; p != nil {
		p.Bytes = counted.n.Load
		p.Start()
	}
	br := bufio.NewReaderSize(counted, 256<<10)
	w := bufio.NewWriterSize(o.Out, 256<<10)
	var n int64
	for {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			o.Progress.finish()
			return n, at, fmt.Errorf("exporting %s: the stream broke after %d entities: %w", o.Model, n, err)
		}
		if bytes.HasPrefix(line, []byte(`{"error"`)) {
			o.Progress.finish()
			return n, at, fmt.Errorf("exporting %s: svc stopped after %d entities: %s", o.Model, n, bytes.TrimSpace(line))
		}
		if _, err := w.Write(line); err != nil {
			o.Progress.finish()
			return n, at, fmt.Errorf("writing the export: %w", err)
		}
		if line[len(line)-1] != '\n' {
			w.WriteByte('\n')
		}
		n++
		if o.Progress != nil {
			o.Progress.Docs.Add(1)
		}
	}
	o.Progress.finish()
	if err := w.Flush(); err != nil {
		return n, at, fmt.Errorf("writing the export: %w", err)
	}
	return n, at, nil
}

func (p *Progress) finish() {
	if p != nil {
		p.Finish("")
	}
}

// Manifest describes an `export --all` directory.
type Manifest struct {
	Version     int             `json:"version"`
	PointInTime string          `json:"pointInTime"`
	Models      []ManifestModel `json:"models"`
}

// ManifestModel is one model of a tenant export.
type ManifestModel struct {
	Name      string `json:"name"`
	Version   int    `json:"version"`
	State     string `json:"state"`
	Entities  int64  `json:"entities"`
	Workflows bool   `json:"workflows"`
}

func (m ManifestModel) ref() ModelRef { return ModelRef{m.Name, m.Version} }

func fileStem(m ModelRef) string { return url.PathEscape(m.Name) + "." + strconv.Itoa(m.Version) }

// ExportAll writes every model of the tenant into dir: its SIMPLE_VIEW
// (models/), its workflows (workflows/), its entities as NDJSON envelopes
// (entities/), all read at one point in time, and manifest.json.
func ExportAll(ctx context.Context, c *Client, dir string, progress func(m ModelRef) *Progress) (*Manifest, error) {
	var models []struct {
		ModelName    string `json:"modelName"`
		ModelVersion int    `json:"modelVersion"`
		CurrentState string `json:"currentState"`
	}
	if err := c.JSON(ctx, "GET", "/model/", nil, &models); err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	for _, sub := range []string{"models", "workflows", "entities"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	man := &Manifest{Version: 1}
	for _, m := range models {
		ref := ModelRef{m.ModelName, m.ModelVersion}
		mm := ManifestModel{Name: m.ModelName, Version: m.ModelVersion, State: m.CurrentState}
		stem := fileStem(ref)
		if err := saveGET(ctx, c, "/model/export/SIMPLE_VIEW/"+ref.path(), filepath.Join(dir, "models", stem+".json")); err != nil {
			return nil, err
		}
		err := saveGET(ctx, c, "/model/"+ref.path()+"/workflow/export", filepath.Join(dir, "workflows", stem+".json"))
		var ae *APIError
		switch {
		case err == nil:
			mm.Workflows = true
		case errors.As(err, &ae) && ae.Status == 404:
		default:
			return nil, err
		}
		f, err := os.Create(filepath.Join(dir, "entities", stem+".ndjson"))
		if err != nil {
			return nil, fmt.Errorf("creating the entity file of %s: %w", ref, err)
		}
		var p *Progress
		if progress != nil {
			p = progress(ref)
		}
		// The first model's read fixes the instant, by svc's clock, for
		// every other model.
		n, at, err := Export(ctx, c, ExportOptions{Model: ref, At: man.PointInTime, Out: f, Progress: p})
		if man.PointInTime == "" {
			man.PointInTime = at
		}
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing the entity file of %s: %w", ref, cerr)
		}
		if err != nil {
			return nil, err
		}
		mm.Entities = n
		man.Models = append(man.Models, mm)
	}
	b, _ := json.MarshalIndent(man, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("writing the manifest: %w", err)
	}
	return man, nil
}

func saveGET(ctx context.Context, c *Client, path, file string) error {
	resp, err := c.Do(ctx, "GET", path, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}

// RestoreOptions configure Restore.
type RestoreOptions struct {
	Dir         string
	Connections int
	Checkpoint  string // per model: Checkpoint + "." + name.version
	Progress    func(m ModelRef) *Progress
}

// Restore recreates an `export --all` directory in the tenant of c: each
// model from its SIMPLE_VIEW, its workflows, then its entities' data
// through the NDJSON create (the model is locked for that and unlocked
// again if it was unlocked when exported). svc gives restored entities
// new ids; their states are what the imported workflows give a new
// entity, and their history starts at the restore.
func Restore(ctx context.Context, c *Client, o RestoreOptions) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(o.Dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("reading the manifest: %w", err)
	}
	var man Manifest
	if err := json.Unmarshal(b, &man); err != nil || man.Version != 1 {
		return nil, fmt.Errorf("%s/manifest.json is not an svc export (version 1): %v", o.Dir, err)
	}
	for _, m := range man.Models {
		ref := m.ref()
		stem := fileStem(ref)
		view, err := os.ReadFile(filepath.Join(o.Dir, "models", stem+".json"))
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", ref, err)
		}
		if err := ensureModel(ctx, c, ref, view); err != nil {
			return nil, err
		}
		if m.Workflows {
			wf, err := os.ReadFile(filepath.Join(o.Dir, "workflows", stem+".json"))
			if err != nil {
				return nil, fmt.Errorf("workflows of %s: %w", ref, err)
			}
			var exp struct {
				Workflows json.RawMessage `json:"workflows"`
			}
			if err := json.Unmarshal(wf, &exp); err != nil {
				return nil, fmt.Errorf("workflows of %s: %w", ref, err)
			}
			body, _ := json.Marshal(map[string]any{"workflows": exp.Workflows, "importMode": "REPLACE"})
			if err := c.JSON(ctx, "POST", "/model/"+ref.path()+"/workflow/import", body, nil); err != nil {
				return nil, fmt.Errorf("importing the workflows of %s: %w", ref, err)
			}
		}
		if err := c.JSON(ctx, "PUT", "/model/"+ref.path()+"/lock", nil, nil); err != nil {
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != 409 {
				return nil, fmt.Errorf("locking %s: %w", ref, err)
			}
		}
		src := filepath.Join(o.Dir, "entities", stem+".ndjson")
		st, err := os.Stat(src)
		if err != nil {
			return nil, fmt.Errorf("entities of %s: %w", ref, err)
		}
		var p *Progress
		if o.Progress != nil {
			if p = o.Progress(ref); p != nil {
				p.Total = st.Size()
			}
		}
		cpPath := ""
		if o.Checkpoint != "" {
			cpPath = o.Checkpoint + "." + stem
		}
		if _, err := Import(ctx, c, ImportOptions{Model: ref, Sources: []Source{{Path: src, Size: st.Size()}}, Batch: 1000,
			Connections: o.Connections, Checkpoint: cpPath, Data: envelopeData, Progress: p}); err != nil {
			return nil, err
		}
		if m.State != "LOCKED" {
			if err := c.JSON(ctx, "PUT", "/model/"+ref.path()+"/unlock", nil, nil); err != nil {
				return nil, fmt.Errorf("unlocking %s as it was exported: %w", ref, err)
			}
		}
	}
	return &man, nil
}

// ensureModel imports a SIMPLE_VIEW unless the model exists with the
// same view (a resumed restore).
func ensureModel(ctx context.Context, c *Client, ref ModelRef, view []byte) error {
	var cur struct {
		Model json.RawMessage `json:"model"`
	}
	var want struct {
		Model json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal(view, &want); err != nil {
		return fmt.Errorf("model %s: the saved view does not parse: %w", ref, err)
	}
	err := c.JSON(ctx, "GET", "/model/export/SIMPLE_VIEW/"+ref.path(), nil, &cur)
	var ae *APIError
	switch {
	case err == nil:
		if !bytes.Equal(compact(cur.Model), compact(want.Model)) {
			return fmt.Errorf("model %s exists in this tenant with another schema; restore into an empty tenant", ref)
		}
		return nil
	case errors.As(err, &ae) && ae.Status == 404:
	default:
		return fmt.Errorf("reading model %s: %w", ref, err)
	}
	if err := c.JSON(ctx, "POST", "/model/import/JSON/SIMPLE_VIEW/"+ref.path(), view, nil); err != nil {
		return fmt.Errorf("importing model %s: %w", ref, err)
	}
	return nil
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// envelopeData takes the document out of an exported envelope.
func envelopeData(line []byte) ([]byte, error) {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(line, &env); err != nil || len(env.Data) == 0 || env.Data[0] != '{' {
		return nil, errors.New("not an exported entity envelope")
	}
	return env.Data, nil
}
