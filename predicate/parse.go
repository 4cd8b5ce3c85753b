package predicate

import (
	"bytes"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// Limits of the condition language.
const (
	// MaxDepth is the deepest a node may sit below the root: a leaf wrapped in
	// 50 nested groups is accepted, 51 are refused (docs/decisions/0020-conditions.md).
	MaxDepth = 50
	// MaxNodes bounds the nodes of one condition, so that a 10 MiB body of
	// leaves cannot turn into a SQL statement beyond PostgreSQL's 65535
	// parameters or an evaluation that costs seconds per entity.
	MaxNodes = 5000
	// MaxRegexLen bounds a MATCHES_PATTERN operand in bytes; MaxRegexInst
	// bounds its compiled program (RE2 runs in linear time, so size is the
	// only cost to cap).
	MaxRegexLen  = 1024
	MaxRegexInst = 20000
	// MaxLikeLen bounds a LIKE pattern: glob matching with backtracking
	// costs up to pattern × text per value.
	MaxLikeLen = 4096
)

type exprKind uint8

const (
	kSimple exprKind = iota + 1
	kLifecycle
	kGroup
	kArray
	kFunction
)

type groupOp uint8

const (
	gAnd groupOp = iota + 1
	gOr
	gNot
)

type operandKind uint8

const (
	oAbsent operandKind = iota
	oNull
	oString
	oNumber
	oBool
	oRange
)

// operand is a condition value stringified for type-directed comparison
// (docs/decisions/0020-conditions.md): strings
// as-is, numbers in their exact lexical form, booleans as true/false.
type operand struct {
	kind   operandKind
	text   string
	lo, hi *operand // oRange
}

// Expr is a parsed condition: structurally valid, not yet checked against a
// model. Compile turns it into a Condition.
type Expr struct {
	kind     exprKind
	path     string // simple, array: jsonPath as written
	field    string // lifecycle
	op       Op
	value    operand
	group    groupOp
	children []*Expr
	values   []operand // array
	fn       *Function
}

// Function is a function (compute-member) criterion. The service does not
// interpret it: the evaluator hands it to a FunctionCaller.
type Function struct {
	Name string
	// Config is the "config" member verbatim (nil when absent).
	Config json.RawMessage
	// Raw is the whole "function" member verbatim.
	Raw json.RawMessage
}

type rawCondition struct {
	Type         string            `json:"type"`
	JSONPath     string            `json:"jsonPath"`
	Field        string            `json:"field"`
	OperatorType string            `json:"operatorType"`
	Operator     string            `json:"operator"`
	Operation    string            `json:"operation"`
	Value        json.RawMessage   `json:"value"`
	Values       json.RawMessage   `json:"values"`
	Conditions   []json.RawMessage `json:"conditions"`
	Function     json.RawMessage   `json:"function"`
}

type rawFunction struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config"`
}

func badRequest(msg string) error {
	return apierr.New(apierr.BadRequest, "invalid condition: "+msg)
}

func invalidCondition(msg string, props ...apierr.Prop) error {
	return apierr.New(apierr.InvalidCondition, msg, props...)
}

// Parse reads a condition and checks its structure: the condition types,
// operator names, operand shapes, nesting depth and size. Errors are
// *apierr.Error: BAD_REQUEST for what does not parse (invalid JSON, unknown
// type, depth, BETWEEN arity) and INVALID_CONDITION for a structurally
// wrong condition (unknown operator, object operand, bad group).
func Parse(data []byte) (*Expr, error) {
	p := parser{}
	return p.parse(data, 0)
}

type parser struct{ nodes int }

func (p *parser) parse(data []byte, depth int) (*Expr, error) {
	if depth > MaxDepth {
		return nil, badRequest("condition nesting exceeds maximum depth of " + strconv.Itoa(MaxDepth))
	}
	p.nodes++
	if p.nodes > MaxNodes {
		return nil, invalidCondition("condition has more than " + strconv.Itoa(MaxNodes) + " nodes")
	}
	var r rawCondition
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, badRequest("failed to parse condition: " + err.Error())
	}
	switch r.Type {
	case "simple", "lifecycle":
		return p.leaf(&r)
	case "group":
		return p.group(&r, depth)
	case "array":
		return p.array(&r)
	case "function":
		return p.function(&r)
	}
	return nil, badRequest("unknown condition type: " + strconv.Quote(r.Type))
}

func (p *parser) leaf(r *rawCondition) (*Expr, error) {
	e := &Expr{kind: kSimple, path: r.JSONPath}
	if r.Type == "lifecycle" {
		e.kind, e.path, e.field = kLifecycle, "", r.Field
	}
	name := r.OperatorType
	if name == "" {
		name = r.Operator
	}
	if name == "" {
		name = r.Operation
	}
	if name == "" {
		return nil, invalidCondition("missing operatorType; valid: "+validOpList, apierr.P("operator", ""))
	}
	if name == opIn || name == opNotIn {
		return p.membership(e, name, r.Value)
	}
	op, ok := ParseOp(name)
	if !ok {
		return nil, invalidCondition("unknown operatorType "+strconv.Quote(name)+"; valid: "+validOpList,
			apierr.P("operator", name))
	}
	e.op = op
	v, err := readOperand(r.Value, op)
	if err != nil {
		return nil, err
	}
	e.value = v
	return e, nil
}

func trimJSON(b []byte) []byte { return bytes.TrimSpace(b) }

// readOperand classifies a value member for op.
func readOperand(raw json.RawMessage, op Op) (operand, error) {
	b := trimJSON(raw)
	if len(b) == 0 {
		if op.family() == famRange {
			return operand{}, apierr.New(apierr.BadRequest, "operator "+strconv.Quote(op.String())+
				" requires exactly two operands, got none", apierr.P("operator", op.String()))
		}
		return operand{kind: oAbsent}, nil
	}
	if b[0] == '{' {
		return operand{}, invalidCondition("condition value is an object, which is not a valid operand",
			apierr.P("operator", op.String()))
	}
	if op.family() == famRange {
		if b[0] != '[' {
			return operand{}, apierr.New(apierr.BadRequest, "operator "+strconv.Quote(op.String())+
				" requires exactly two operands, got a single value", apierr.P("operator", op.String()))
		}
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			return operand{}, badRequest("failed to parse condition: " + err.Error())
		}
		if len(items) != 2 {
			return operand{}, apierr.New(apierr.BadRequest, "operator "+strconv.Quote(op.String())+
				" requires exactly two operands, got "+strconv.Itoa(len(items)), apierr.P("operator", op.String()))
		}
		lo, err := readScalar(items[0], op)
		if err != nil {
			return operand{}, err
		}
		hi, err := readScalar(items[1], op)
		if err != nil {
			return operand{}, err
		}
		return operand{kind: oRange, lo: &lo, hi: &hi}, nil
	}
	if b[0] == '[' {
		if op.family() == famPresence {
			return operand{kind: oAbsent}, nil
		}
		return operand{}, invalidCondition("condition value is an array, which is only an operand of BETWEEN",
			apierr.P("operator", op.String()))
	}
	return readScalar(b, op)
}

func readScalar(raw json.RawMessage, op Op) (operand, error) {
	b := trimJSON(raw)
	if len(b) == 0 {
		return operand{kind: oNull}, nil
	}
	switch b[0] {
	case '{', '[':
		return operand{}, invalidCondition("condition value holds an object or array, which is not a valid operand",
			apierr.P("operator", op.String()))
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return operand{}, badRequest("failed to parse condition: " + err.Error())
		}
		return operand{kind: oString, text: s}, nil
	case 't', 'f':
		return operand{kind: oBool, text: string(b)}, nil
	case 'n':
		return operand{kind: oNull}, nil
	}
	return operand{kind: oNumber, text: string(b)}, nil
}

func (p *parser) group(r *rawCondition, depth int) (*Expr, error) {
	e := &Expr{kind: kGroup}
	switch r.Operator {
	case "AND":
		e.group = gAnd
	case "OR":
		e.group = gOr
	case "NOT":
		e.group = gNot
	default:
		return nil, invalidCondition("unknown group operator "+strconv.Quote(r.Operator)+"; valid: AND, NOT, OR",
			apierr.P("operator", r.Operator))
	}
	if e.group == gNot && len(r.Conditions) != 1 {
		return nil, invalidCondition("a NOT group takes exactly one condition, got "+strconv.Itoa(len(r.Conditions)),
			apierr.P("operator", "NOT"))
	}
	e.children = make([]*Expr, 0, len(r.Conditions))
	for _, c := range r.Conditions {
		ch, err := p.parse(c, depth+1)
		if err != nil {
			return nil, err
		}
		e.children = append(e.children, ch)
	}
	return e, nil
}

func (p *parser) array(r *rawCondition) (*Expr, error) {
	e := &Expr{kind: kArray, path: r.JSONPath}
	raw := trimJSON(r.Values)
	if len(raw) == 0 {
		raw = trimJSON(r.Value) // the OpenAPI DTO's spelling
	}
	if len(raw) == 0 || string(raw) == "null" {
		return e, nil
	}
	if raw[0] != '[' {
		return nil, invalidCondition("array condition values must be an array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest("failed to parse condition: " + err.Error())
	}
	if len(items) > MaxNodes {
		return nil, invalidCondition("condition has more than " + strconv.Itoa(MaxNodes) + " nodes")
	}
	p.nodes += len(items)
	for _, it := range items {
		v, err := readScalar(it, OpEquals)
		if err != nil {
			return nil, err
		}
		e.values = append(e.values, v)
	}
	return e, nil
}

func (p *parser) function(r *rawCondition) (*Expr, error) {
	raw := trimJSON(r.Function)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, invalidCondition("a function condition needs a function object")
	}
	var f rawFunction
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, badRequest("failed to parse condition: " + err.Error())
	}
	if strings.TrimSpace(f.Name) == "" {
		return nil, invalidCondition("a function condition needs function.name")
	}
	fn := &Function{Name: f.Name, Raw: append(json.RawMessage(nil), raw...)}
	if c := trimJSON(f.Config); len(c) > 0 && string(c) != "null" {
		fn.Config = append(json.RawMessage(nil), c...)
	}
	return &Expr{kind: kFunction, fn: fn}, nil
}
