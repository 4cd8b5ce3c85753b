package workflow

import (
	"strings"
	"time"

	json "github.com/goccy/go-json"
)

// Set is a model's stored workflows prepared for the engine: criteria
// classified, tags split, defaults resolved. It is immutable and safe for
// concurrent use; callers cache it per model revision.
type Set struct {
	workflows []*compiled // stored order
	def       *compiled
}

type compiled struct {
	w         *Workflow
	criterion *criterion // nil matches everything
	states    map[string]*cstate
}

type cstate struct {
	transitions []*ctransition
}

type ctransition struct {
	t         *Transition
	criterion *criterion
	procs     []*cprocessor
	names     string // "[a b]" for PAUSE_FOR_PROCESSING
}

type cprocessor struct {
	p       *Processor
	mode    string // declared mode; "" runs as SYNC
	tags    []string
	attach  bool
	timeout time.Duration
}

// criterion is a condition with what the engine needs to know up front.
type criterion struct {
	raw  json.RawMessage
	kind string // condition type, for audit data
	fn   *functionSpec
}

// functionSpec is a top-level function criterion.
type functionSpec struct {
	name    string
	tags    []string
	tagsCSV string
	attach  bool
	timeout time.Duration
	context string
}

type conditionHead struct {
	Type     string `json:"type"`
	Function *struct {
		Name   string `json:"name"`
		Config *struct {
			CalculationNodesTags string `json:"calculationNodesTags"`
			AttachEntity         *bool  `json:"attachEntity"`
			ResponseTimeoutMs    int64  `json:"responseTimeoutMs"`
			Context              string `json:"context"`
		} `json:"config"`
	} `json:"function"`
}

var defaultCompiled = mustCompileDefault()

func mustCompileDefault() *compiled {
	w := DefaultWorkflow()
	c, err := compileWorkflow(&w)
	if err != nil {
		panic("workflow: compile default workflow: " + err.Error())
	}
	return c
}

// Compile prepares stored workflows (as Decode returns them) for the
// engine. An empty set runs every entity through the default workflow.
func Compile(ws []Workflow) (*Set, error) {
	s := &Set{def: defaultCompiled, workflows: make([]*compiled, 0, len(ws))}
	for i := range ws {
		w := ws[i]
		c, err := compileWorkflow(&w)
		if err != nil {
			return nil, err
		}
		s.workflows = append(s.workflows, c)
	}
	return s, nil
}

// CompileStored decodes and compiles a model's Workflows bytes.
func CompileStored(stored []byte) (*Set, error) {
	ws, err := Decode(stored)
	if err != nil {
		return nil, err
	}
	return Compile(ws)
}

func compileWorkflow(w *Workflow) (*compiled, error) {
	c := &compiled{w: w, states: make(map[string]*cstate, len(w.States))}
	var err error
	if c.criterion, err = compileCriterion(w.Criterion); err != nil {
		return nil, err
	}
	for name, s := range w.States {
		cs := &cstate{transitions: make([]*ctransition, len(s.Transitions))}
		for i := range s.Transitions {
			t := &s.Transitions[i]
			ct := &ctransition{t: t}
			if ct.criterion, err = compileCriterion(t.Criterion); err != nil {
				return nil, err
			}
			pnames := make([]string, len(t.Processors))
			for j := range t.Processors {
				p := &t.Processors[j]
				pnames[j] = p.Name
				ct.procs = append(ct.procs, &cprocessor{
					p: p, mode: p.ExecutionMode,
					tags:    splitTags(p.Config.CalculationNodesTags),
					attach:  p.Config.AttachEntity == nil || *p.Config.AttachEntity,
					timeout: timeoutOf(p.Config.ResponseTimeoutMs),
				})
			}
			ct.names = "[" + strings.Join(pnames, " ") + "]"
			cs.transitions[i] = ct
		}
		c.states[name] = cs
	}
	return c, nil
}

func compileCriterion(raw json.RawMessage) (*criterion, error) {
	if isNull(raw) {
		return nil, nil
	}
	var h conditionHead
	if err := json.Unmarshal(raw, &h); err != nil {
		// Kept: evaluation reports it as WORKFLOW_FAILED, as for any
		// condition that does not parse.
		return &criterion{raw: raw, kind: "invalid"}, nil
	}
	c := &criterion{raw: raw, kind: h.Type}
	if h.Type == "function" && h.Function != nil {
		f := &functionSpec{name: h.Function.Name, attach: true, timeout: timeoutOf(0)}
		if cfg := h.Function.Config; cfg != nil {
			f.tagsCSV = cfg.CalculationNodesTags
			f.tags = splitTags(cfg.CalculationNodesTags)
			f.attach = cfg.AttachEntity == nil || *cfg.AttachEntity
			f.timeout = timeoutOf(cfg.ResponseTimeoutMs)
			f.context = cfg.Context
		}
		c.fn = f
	}
	return c, nil
}

// splitTags splits calculationNodesTags on commas, trimming blanks.
func splitTags(csv string) []string {
	if strings.TrimSpace(csv) == "" {
		return nil
	}
	parts := strings.Split(csv, ",")
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func timeoutOf(ms int64) time.Duration {
	if ms <= 0 {
		ms = DefaultResponseTimeoutMs
	}
	return time.Duration(ms) * time.Millisecond
}

// Len is the number of stored workflows (0 means the default applies).
func (s *Set) Len() int { return len(s.workflows) }

// byState is the first active workflow that declares state, or the default
// workflow when nothing is stored (docs/decisions/0017-workflow-engine.md).
func (s *Set) byState(state string) *compiled {
	if len(s.workflows) == 0 {
		return s.def
	}
	for _, c := range s.workflows {
		if c.w.IsActive() {
			if _, ok := c.states[state]; ok {
				return c
			}
		}
	}
	return nil
}

// Transitions lists the transitions an entity in state can be asked to
// fire by name: those of its workflow's state that are neither disabled nor
// scheduled, in declaration order. Nil when no workflow declares the state.
func (s *Set) Transitions(state string) []string {
	c := s.byState(state)
	if c == nil {
		return nil
	}
	st := c.states[state]
	out := make([]string, 0, len(st.transitions))
	for _, t := range st.transitions {
		if !t.t.Disabled && t.t.Schedule == nil {
			out = append(out, t.t.Name)
		}
	}
	return out
}
