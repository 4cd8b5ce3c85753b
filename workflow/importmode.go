package workflow

import (
	"log/slog"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// ImportResult is what an import produced: the bytes to store in the
// model's Workflows and what the import log line reports.
type ImportResult struct {
	Stored []byte
	// Changed is false for a MERGE of nothing, which needs no save.
	Changed bool
	// IncomingCount and StoredCount feed the "workflow import applied" log.
	IncomingCount int
	StoredCount   int
	// CyclesAllowed is set when allowCycles skipped the loop check, which
	// the caller logs at WARN.
	CyclesAllowed bool
	// Summaries name the incoming workflows for the log line.
	Summaries []Summary
}

// Summary is a workflow's name and description cut to 200 runes.
type Summary struct {
	Name string `json:"name"`
	Desc string `json:"desc,omitempty"`
}

// Log writes the import's log lines (docs/decisions/0016-workflow-definitions.md): INFO "workflow import
// applied", or WARN when the result holds no workflows, and a WARN when
// allowCycles skipped the loop check.
func (r *ImportResult) Log(log *slog.Logger, attrs ...any) {
	if r.CyclesAllowed {
		log.Warn("workflow import accepted without the infinite-loop check (allowCycles)", attrs...)
	}
	attrs = append(attrs, "workflowCount", r.IncomingCount, "storedWorkflowCount", r.StoredCount, "workflows", r.Summaries)
	if r.StoredCount == 0 {
		log.Warn("workflow import resulted in zero workflows", attrs...)
		return
	}
	log.Info("workflow import applied", attrs...)
}

func summarize(ws []Workflow) []Summary {
	out := make([]Summary, len(ws))
	for i, w := range ws {
		d := w.Desc
		if utf8.RuneCountInString(d) > 200 {
			d = string([]rune(d)[:200]) + "..."
		}
		out[i] = Summary{Name: w.Name, Desc: d}
	}
	return out
}

// Import validates req (which ParseImport produced) and applies it to a
// model's stored workflow set (docs/decisions/0016-workflow-definitions.md, order of checks from the empty-import
// check on). stored is the model's
// current Workflows bytes (nil for none).
func Import(stored []byte, req *ImportRequest, cc ConditionChecker) (*ImportResult, error) {
	if err := req.Validate(cc); err != nil {
		return nil, err
	}
	existing, err := Decode(stored)
	if err != nil {
		return nil, err
	}
	if len(req.Workflows) == 0 { // MERGE of nothing
		return &ImportResult{Stored: stored, StoredCount: len(existing)}, nil
	}
	merged := ApplyMode(req.ImportMode, existing, req.Workflows)
	if err := checkMerged(merged, req.AllowCycles); err != nil {
		return nil, err
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return nil, err
	}
	return &ImportResult{Stored: out, Changed: true, IncomingCount: len(req.Workflows),
		StoredCount: len(merged), CyclesAllowed: req.AllowCycles, Summaries: summarize(req.Workflows)}, nil
}

// ApplyMode combines the stored workflows with the incoming ones (docs/decisions/0016-workflow-definitions.md,
// modes). It never forces `active`; it returns a new slice.
//   - MERGE: stored order kept, same-named workflows replaced in place, new
//     names appended.
//   - REPLACE: the incoming set only, in request order.
//   - ACTIVATE: stored workflows not in the request kept but deactivated,
//     then the incoming set appended as supplied.
func ApplyMode(mode string, existing, incoming []Workflow) []Workflow {
	switch mode {
	case ModeReplace:
		return append([]Workflow(nil), incoming...)
	case ModeActivate:
		in := names(incoming)
		out := make([]Workflow, 0, len(existing)+len(incoming))
		for _, w := range existing {
			if in[w.Name] {
				continue
			}
			w.Active = boolPtr(false)
			out = append(out, w)
		}
		return append(out, incoming...)
	default:
		out := append([]Workflow(nil), existing...)
		at := make(map[string]int, len(out))
		for i, w := range out {
			at[w.Name] = i
		}
		for _, w := range incoming {
			if i, ok := at[w.Name]; ok {
				out[i] = w
				continue
			}
			at[w.Name] = len(out)
			out = append(out, w)
		}
		return out
	}
}

func names(ws []Workflow) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w.Name] = true
	}
	return m
}

// checkMerged runs the checks that look at the merged result (docs/decisions/0016-workflow-definitions.md, the
// last check): definite loops unless allowed, and startNewTxOnDispatch only
// with COMMIT_BEFORE_DISPATCH.
func checkMerged(ws []Workflow, allowCycles bool) error {
	for i := range ws {
		w := &ws[i]
		wp := "workflow " + quote(w.Name) + ": "
		if !allowCycles {
			if loop := findDefiniteLoop(w); loop != "" {
				return validationFailed("%sinfinite loop of automated transitions without criteria: %s (set allowCycles to accept it)", wp, loop)
			}
		}
		for _, sn := range sortedStates(w) {
			for _, t := range w.States[sn].Transitions {
				for pi := range t.Processors {
					p := &t.Processors[pi]
					if err := checkTxFlag(p, wp+"state "+quote(sn)+": transition "+quote(t.Name)+": processor "+quote(p.Name)+": "); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
