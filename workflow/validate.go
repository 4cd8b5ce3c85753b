package workflow

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// ConditionChecker validates a criterion's condition at import: that it
// parses, its operators exist, its regular expressions compile and its
// lifecycle clauses are sound. The predicate package implements it; a nil
// checker only checks that a criterion is a JSON object.
type ConditionChecker interface {
	CheckCondition(cond json.RawMessage) error
}

var validRetryPolicies = map[string]bool{
	"": true, "NONE": true, "FIXED": true,
	// Accepted aliases of the client templates; they behave as FIXED.
	"EXPONENTIAL": true, "LINEAR": true, "EXPONENTIAL_BACKOFF": true, "LINEAR_BACKOFF": true,
}

var validExecutionModes = map[string]bool{
	"": true, ModeSync: true, ModeAsyncSameTx: true, ModeAsyncNewTx: true, ModeCommitBeforeDispatch: true,
}

// Validate checks the incoming workflows (docs/decisions/0016-workflow-definitions.md): an empty
// REPLACE or ACTIVATE, the structural rules and the annotation
// rules. It applies import defaults (active, attachEntity) and compacts
// annotations in place. Stored workflows are not re-validated here.
func (r *ImportRequest) Validate(cc ConditionChecker) error {
	if len(r.Workflows) == 0 {
		if r.ImportMode == ModeReplace || r.ImportMode == ModeActivate {
			return validationFailed("%s import needs at least one workflow", r.ImportMode)
		}
		return nil
	}
	seen := make(map[string]bool, len(r.Workflows))
	for i := range r.Workflows {
		w := &r.Workflows[i]
		normalizeRaw(w)
		if err := checkIdent("workflow name", w.Name, ""); err != nil {
			return err
		}
		if seen[w.Name] {
			return validationFailed("duplicate workflow name %q in the request", w.Name)
		}
		seen[w.Name] = true
		if err := validateStructure(w, cc); err != nil {
			return err
		}
	}
	for i := range r.Workflows {
		if err := compactAnnotations(&r.Workflows[i]); err != nil {
			return err
		}
		applyDefaults(&r.Workflows[i])
	}
	return nil
}

func checkIdent(what, v, where string) error {
	if v == "" {
		return validationFailed("%s%s must not be empty", where, what)
	}
	if utf8.RuneCountInString(v) > MaxIdentifierLen {
		return validationFailed("%s%s is longer than %d characters", where, what, MaxIdentifierLen)
	}
	return nil
}

func validateStructure(w *Workflow, cc ConditionChecker) error {
	wp := "workflow " + quote(w.Name) + ": "
	if w.InitialState == "" {
		return validationFailed("%sinitialState must not be empty", wp)
	}
	if len(w.States) == 0 {
		return validationFailed("%sstates must declare at least the initial state", wp)
	}
	if _, ok := w.States[w.InitialState]; !ok {
		return validationFailed("%sinitialState %q is not a declared state", wp, w.InitialState)
	}
	if err := checkCriterion(w.Criterion, wp, cc); err != nil {
		return err
	}
	for _, sn := range sortedStates(w) {
		if err := checkIdent("state name", sn, wp); err != nil {
			return err
		}
		sp := wp + "state " + quote(sn) + ": "
		s := w.States[sn]
		names := make(map[string]bool, len(s.Transitions))
		for ti := range s.Transitions {
			t := &s.Transitions[ti]
			if err := checkIdent("transition name", t.Name, sp); err != nil {
				return err
			}
			if names[t.Name] {
				return validationFailed("%sduplicate transition name %q", sp, t.Name)
			}
			names[t.Name] = true
			tp := sp + "transition " + quote(t.Name) + ": "
			if _, ok := w.States[t.Next]; !ok {
				return validationFailed("%snext state %q is not a declared state", tp, t.Next)
			}
			if err := checkCriterion(t.Criterion, tp, cc); err != nil {
				return err
			}
			if t.Schedule != nil {
				if err := checkSchedule(t, tp); err != nil {
					return err
				}
			}
			for pi := range t.Processors {
				if err := checkProcessor(&t.Processors[pi], tp); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func checkCriterion(c json.RawMessage, where string, cc ConditionChecker) error {
	if c == nil {
		return nil
	}
	if t := bytes.TrimSpace(c); len(t) == 0 || t[0] != '{' {
		return validationFailed("%scriterion must be a condition object or null", where)
	}
	if cc != nil {
		if err := cc.CheckCondition(c); err != nil {
			return validationFailed("%sinvalid criterion: %s", where, errText(err))
		}
	}
	return nil
}

func checkSchedule(t *Transition, where string) error {
	s := t.Schedule
	if t.Manual {
		return validationFailed("%smanual and scheduled are mutually exclusive", where)
	}
	if s.DelayMs < 0 {
		s.DelayMs = 0 // a delay of 0 or less counts as absent
	}
	if (s.DelayMs > 0) == (s.Function != nil) {
		return validationFailed("%sexactly one of schedule.delayMs or schedule.function is required", where)
	}
	if s.TimeoutMs != nil && *s.TimeoutMs < 0 {
		return validationFailed("%sschedule.timeoutMs must be 0 or more", where)
	}
	if f := s.Function; f != nil {
		if f.Name == "" {
			return validationFailed("%sschedule.function.name must not be empty", where)
		}
		if f.ResultKind != "Schedule" {
			return validationFailed("%sschedule.function.resultKind must be \"Schedule\", got %q", where, f.ResultKind)
		}
		if f.CalculationNodesTags == "" {
			return validationFailed("%sschedule.function.calculationNodesTags must not be empty", where)
		}
		if f.ResponseTimeoutMs < 0 {
			return validationFailed("%sschedule.function.responseTimeoutMs must be 0 or more", where)
		}
		if !validRetryPolicies[f.RetryPolicy] {
			return validationFailed("%sschedule.function.retryPolicy %q is not one of NONE, FIXED", where, f.RetryPolicy)
		}
	}
	return nil
}

func checkProcessor(p *Processor, where string) error {
	if err := checkIdent("processor name", p.Name, where); err != nil {
		return err
	}
	pp := where + "processor " + quote(p.Name) + ": "
	if !validExecutionModes[p.ExecutionMode] {
		return validationFailed("%sexecutionMode %q is not one of SYNC, ASYNC_SAME_TX, ASYNC_NEW_TX, COMMIT_BEFORE_DISPATCH", pp, p.ExecutionMode)
	}
	c := &p.Config
	if !validRetryPolicies[c.RetryPolicy] {
		return validationFailed("%sretryPolicy %q is not one of NONE, FIXED", pp, c.RetryPolicy)
	}
	if c.AsyncResult != nil && *c.AsyncResult {
		return validationFailed("%sasyncResult=true is not supported", pp)
	}
	if !isNull(c.CrossoverToAsyncMs) {
		return validationFailed("%scrossoverToAsyncMs is not supported", pp)
	}
	if c.ResponseTimeoutMs < 0 {
		return validationFailed("%sresponseTimeoutMs must be 0 or more", pp)
	}
	if p.StartNewTxOnDispatch != nil {
		c.StartNewTxOnDispatch = c.StartNewTxOnDispatch || *p.StartNewTxOnDispatch
		p.StartNewTxOnDispatch = nil
	}
	return checkTxFlag(p, pp)
}

func checkTxFlag(p *Processor, where string) error {
	if p.Config.StartNewTxOnDispatch && p.ExecutionMode != ModeCommitBeforeDispatch {
		return validationFailed("%sstartNewTxOnDispatch=true needs executionMode COMMIT_BEFORE_DISPATCH", where)
	}
	return nil
}

// compactAnnotations enforces the annotation rules (JSON objects of at most
// 64 KiB once compacted) and stores them compacted.
func compactAnnotations(w *Workflow) error {
	wp := "workflow " + quote(w.Name) + ": "
	if err := compactAnn(&w.Annotations, wp+"annotations"); err != nil {
		return err
	}
	if err := compactAnn(&w.CriterionAnnotations, wp+"criterionAnnotations"); err != nil {
		return err
	}
	for _, sn := range sortedStates(w) {
		s := w.States[sn]
		sp := wp + "state " + quote(sn) + ": "
		if err := compactAnn(&s.Annotations, sp+"annotations"); err != nil {
			return err
		}
		for ti := range s.Transitions {
			t := &s.Transitions[ti]
			tp := sp + "transition " + quote(t.Name) + ": "
			if err := compactAnn(&t.Annotations, tp+"annotations"); err != nil {
				return err
			}
			if err := compactAnn(&t.CriterionAnnotations, tp+"criterionAnnotations"); err != nil {
				return err
			}
			for pi := range t.Processors {
				p := &t.Processors[pi]
				if err := compactAnn(&p.Annotations, tp+"processor "+quote(p.Name)+": annotations"); err != nil {
					return err
				}
			}
		}
		w.States[sn] = s
	}
	return nil
}

func compactAnn(raw *json.RawMessage, what string) error {
	if *raw == nil {
		return nil
	}
	t := bytes.TrimSpace(*raw)
	if len(t) == 0 || t[0] != '{' {
		return validationFailed("%s must be a JSON object", what)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, t); err != nil {
		return validationFailed("%s is not valid JSON", what)
	}
	if buf.Len() > MaxAnnotationSize {
		return validationFailed("%s is larger than %d bytes", what, MaxAnnotationSize)
	}
	*raw = buf.Bytes()
	return nil
}

// applyDefaults makes absent flags explicit so every stored workflow reads
// the same after export and re-import.
func applyDefaults(w *Workflow) {
	if w.Active == nil {
		w.Active = boolPtr(true)
	}
	for _, s := range w.States {
		for ti := range s.Transitions {
			t := &s.Transitions[ti]
			for pi := range t.Processors {
				if t.Processors[pi].Config.AttachEntity == nil {
					t.Processors[pi].Config.AttachEntity = boolPtr(true)
				}
			}
			if t.Schedule != nil && t.Schedule.Function != nil && t.Schedule.Function.AttachEntity == nil {
				t.Schedule.Function.AttachEntity = boolPtr(true)
			}
		}
	}
}

func boolPtr(b bool) *bool { return &b }

func sortedStates(w *Workflow) []string {
	names := make([]string, 0, len(w.States))
	for n := range w.States {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
	return b.String()
}

// errText is an error's message without a catalogue code prefix.
func errText(err error) string {
	if e, ok := apierr.As(err); ok {
		return e.Message
	}
	return err.Error()
}
