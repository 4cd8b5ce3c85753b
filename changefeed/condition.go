package changefeed

import (
	"strconv"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/predicate"
)

// compileBodyPredicate checks a subscription's body condition: svc's
// condition language without lifecycle or function conditions at any
// depth (docs/decisions/0032-change-events.md: an event is matched on the
// node that commits it, with no member to call and no lifecycle
// metadata beyond kind and states, which the filter has). where is the
// condition's path in the request, named in the 400.
func compileBodyPredicate(raw json.RawMessage, where string) (*predicate.Condition, error) {
	if err := refuseKinds(raw, where, 0); err != nil {
		return nil, err
	}
	c, err := predicate.Compile(raw, nil)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// refuseKinds walks the raw condition and refuses the first lifecycle or
// function condition, naming its path.
func refuseKinds(raw json.RawMessage, path string, depth int) error {
	if depth > predicate.MaxDepth {
		return nil // Parse refuses the depth with its own message
	}
	var node struct {
		Type       string            `json:"type"`
		Conditions []json.RawMessage `json:"conditions"`
	}
	if json.Unmarshal(raw, &node) != nil {
		return nil // Parse says what is wrong with it
	}
	switch node.Type {
	case "lifecycle", "function":
		return apierr.New(apierr.BadRequest, "a subscription's bodyPredicate cannot use "+node.Type+" conditions; found one at "+path,
			apierr.P("path", path))
	}
	for i, c := range node.Conditions {
		if err := refuseKinds(c, path+".conditions["+strconv.Itoa(i)+"]", depth+1); err != nil {
			return err
		}
	}
	return nil
}
