package predicate

import (
	json "github.com/goccy/go-json"
	"strconv"

	"svc/platform/apierr"
)

// IN and NOT_IN (value an array) are the current Python client template's
// set operators (docs/decisions/0030-client-compatibility.md). They are shorthand, not new
// semantics: IN is an OR group of EQUALS, one per element; NOT_IN is
// NOT_NULL and NOT of that group, so like NOT_EQUAL it skips a null or
// absent value (NOT_IN [x] is NOT_EQUAL x). Evaluation, PostgreSQL
// pushdown, schema checks and type errors are those of the expansion. An
// empty array matches nothing (IN) or every non-null value (NOT_IN).
const (
	opIn    = "IN"
	opNotIn = "NOT_IN"
)

// membership expands leaf (a simple or lifecycle condition without its
// operator yet) into the group IN or NOT_IN stands for.
func (p *parser) membership(leaf *Expr, name string, raw json.RawMessage) (*Expr, error) {
	b := trimJSON(raw)
	if len(b) == 0 || b[0] != '[' {
		return nil, invalidCondition("operator "+strconv.Quote(name)+" takes an array of values", apierr.P("operator", name))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, badRequest("failed to parse condition: " + err.Error())
	}
	p.nodes += len(items)
	if p.nodes > MaxNodes {
		return nil, invalidCondition("condition has more than " + strconv.Itoa(MaxNodes) + " nodes")
	}
	anyOf := &Expr{kind: kGroup, group: gOr, children: make([]*Expr, 0, len(items))}
	for _, it := range items {
		v, err := readScalar(it, OpEquals)
		if err != nil {
			return nil, err
		}
		eq := *leaf
		eq.op, eq.value = OpEquals, v
		anyOf.children = append(anyOf.children, &eq)
	}
	if name == opNotIn {
		present := *leaf
		present.op, present.value = OpNotNull, operand{kind: oAbsent}
		none := &Expr{kind: kGroup, group: gNot, children: []*Expr{anyOf}}
		return &Expr{kind: kGroup, group: gAnd, children: []*Expr{&present, none}}, nil
	}
	return anyOf, nil
}
