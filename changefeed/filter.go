package changefeed

import (
	"strconv"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/predicate"
	"svc/storage"
)

// Filter selects the events of one model a subscription (or a live
// stream) receives. Model name and version are required: the watched set
// and the log are keyed by them.
type Filter struct {
	ModelName     string          `json:"modelName"`
	ModelVersion  int             `json:"modelVersion"`
	Kinds         []string        `json:"kinds,omitempty"`
	FromState     string          `json:"fromState,omitempty"`
	ToState       string          `json:"toState,omitempty"`
	BodyPredicate json.RawMessage `json:"bodyPredicate,omitempty"`

	cond *predicate.Condition
}

// Model is the filter's model key.
func (f *Filter) Model() storage.ModelKey {
	return storage.ModelKey{Name: f.ModelName, Version: f.ModelVersion}
}

func badField(path, msg string) error {
	return apierr.New(apierr.BadRequest, path+": "+msg, apierr.P("path", path))
}

// Compile checks the filter; where prefixes the paths its errors name.
func (f *Filter) Compile(where string) error {
	if f.ModelName == "" {
		return badField(where+".modelName", "required")
	}
	if f.ModelVersion < 1 {
		return badField(where+".modelVersion", "required, a positive integer")
	}
	for i, k := range f.Kinds {
		switch k {
		case storage.KindCreate, storage.KindUpdate, storage.KindDelete:
		default:
			return badField(where+".kinds["+strconv.Itoa(i)+"]", "unknown kind "+strconv.Quote(k)+"; valid: CREATE, UPDATE, DELETE")
		}
	}
	if len(f.BodyPredicate) > 0 && string(f.BodyPredicate) != "null" {
		c, err := compileBodyPredicate(f.BodyPredicate, where+".bodyPredicate")
		if err != nil {
			return err
		}
		f.cond = c
	}
	return nil
}

// needsBody says the filter reads the body after (so the recorder keeps
// it even when no subscriber asked for bodies).
func (f *Filter) needsBody() bool { return f.cond != nil }

// Match reports whether e passes the filter. The body condition is tested
// on the body after the change; a DELETE has none, so it is tested on the
// body before, which the recorder keeps for every DELETE of a model whose
// subscriptions read bodies (needsBody); without it the condition fails.
func (f *Filter) Match(e *storage.ChangeEvent) bool {
	if e.Model.Name != f.ModelName || e.Model.Version != f.ModelVersion {
		return false
	}
	if len(f.Kinds) > 0 {
		ok := false
		for _, k := range f.Kinds {
			if k == e.Kind {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if f.FromState != "" && e.FromState != f.FromState {
		return false
	}
	if f.ToState != "" && e.ToState != f.ToState {
		return false
	}
	if f.cond != nil {
		body := e.BodyAfter
		if e.Kind == storage.KindDelete {
			body = e.BodyBefore
		}
		if len(body) == 0 || !f.cond.Match(body, nil) {
			return false
		}
	}
	return true
}
