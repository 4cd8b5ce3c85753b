package workflow

import (
	"bytes"
	"fmt"
	"strings"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/platform/jsondoc"
)

// ParseImport decodes an import body and runs the checks that need no
// model (docs/decisions/0016-workflow-definitions.md, the first checks, in
// that order): the text, duplicate-key and depth faults of jsondoc, body
// size, decode, trailing data, the import mode and every workflow's schema
// version. The HTTP adapter calls it and hands model.Service the
// ImportRequest, so the model is looked up after this and a bad version
// answers 400 even for an unknown model.
func ParseImport(body []byte) (*ImportRequest, error) {
	if err := jsondoc.Refusal(body, ""); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apierr.New(apierr.BadRequest, "failed to read request body: body is empty")
	}
	if len(body) > MaxImportBytes {
		return nil, apierr.New(apierr.BadRequest, fmt.Sprintf("failed to read request body: larger than %d bytes", MaxImportBytes))
	}
	var req ImportRequest
	if err := decodeLenient(body, &req); err != nil {
		return nil, err
	}
	mode, err := normalizeMode(req.ImportMode)
	if err != nil {
		return nil, err
	}
	req.ImportMode = mode
	for i := range req.Workflows {
		if err := CheckVersion(req.Workflows[i].Name, req.Workflows[i].Version); err != nil {
			return nil, err
		}
	}
	return &req, nil
}

// decodeLenient decodes one JSON value into v, ignoring members svc does not
// know at any level (real workflow files carry keys such as
// "_calculationNodesTags" in a processor config, and the compatible system
// accepts them: docs/decisions/0016-workflow-definitions.md) while a known
// member of the wrong type still fails, and refusing anything but white space
// after the value. Duplicate keys were refused before (jsondoc.Refusal).
func decodeLenient(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return apierr.New(apierr.BadRequest, "invalid JSON: "+err.Error())
	}
	off := dec.InputOffset()
	if off < 0 || off > int64(len(body)) || len(bytes.TrimSpace(body[off:])) != 0 {
		return apierr.New(apierr.BadRequest, "invalid JSON: unexpected data after the top-level value")
	}
	return nil
}

func normalizeMode(m string) (string, error) {
	switch strings.ToUpper(m) {
	case "", ModeMerge:
		return ModeMerge, nil
	case ModeReplace:
		return ModeReplace, nil
	case ModeActivate:
		return ModeActivate, nil
	}
	return "", apierr.New(apierr.BadRequest, "unknown importMode: "+m, apierr.P("importMode", m))
}

// Decode reads a model's stored workflow set. Stored bytes were written by
// Import, so they are decoded leniently; nil or empty means no workflows.
func Decode(stored []byte) ([]Workflow, error) {
	if len(bytes.TrimSpace(stored)) == 0 {
		return nil, nil
	}
	var ws []Workflow
	if err := json.Unmarshal(stored, &ws); err != nil {
		return nil, fmt.Errorf("workflow: decode stored workflows: %w", err)
	}
	for i := range ws {
		normalizeRaw(&ws[i])
	}
	return ws, nil
}

// isNull reports whether raw is absent or the JSON literal null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// normalizeRaw turns JSON null criteria and annotations into absent ones so
// "null" and a missing member behave and export alike.
func normalizeRaw(w *Workflow) {
	nilIfNull(&w.Criterion)
	nilIfNull(&w.CriterionAnnotations)
	nilIfNull(&w.Annotations)
	for name, s := range w.States {
		nilIfNull(&s.Annotations)
		for i := range s.Transitions {
			t := &s.Transitions[i]
			nilIfNull(&t.Criterion)
			nilIfNull(&t.CriterionAnnotations)
			nilIfNull(&t.Annotations)
			for j := range t.Processors {
				p := &t.Processors[j]
				nilIfNull(&p.Annotations)
				nilIfNull(&p.Config.CrossoverToAsyncMs)
			}
		}
		w.States[name] = s
	}
}

func nilIfNull(raw *json.RawMessage) {
	if isNull(*raw) {
		*raw = nil
	}
}
