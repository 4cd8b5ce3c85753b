// Package streamdata serves the platform's stream-data operations
// (docs/decisions/0025-stream-data.md): saved definitions over one model read
// page by page at a pinned point in time, delete of what a definition
// matches, and the index list and query plan that tell whether a
// definition is served by an index.
//
// A definition arrives in the Joda-bean wire form (@bean, @meta, @type),
// the flattened form of the wire contract, or with REST search conditions
// (type/jsonPath/operatorType); all three parse into one Def, which is
// compiled to the search package's plan (a predicate condition plus a sort
// key on the range field) and run by the storage engine.
package streamdata

import (
	"bytes"
	"crypto/sha256"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// Limits of a definition.
const (
	MaxDefBytes = 1 << 20
	maxDepth    = 32
	maxNodes    = 1024
)

// Def is a parsed stream definition.
type Def struct {
	RequestClass string
	// Range is the range condition; its field orders the rows.
	Range *Node
	Desc  bool
	Cond  *Node
	// Columns in output order.
	Columns []Column
	ColDefs map[string]*ColDef
	Aliases map[string]*AliasDef
	// digest is the SHA-256 of the definition's bytes as sent (trimmed):
	// with the model version it names the stream whose bookmarks a page
	// reads and writes.
	digest [32]byte
}

// Column is one output column: a column path or an alias name.
type Column struct {
	Name  string
	Alias bool
}

// ColDef is one column definition: its full path and hop count.
type ColDef struct {
	FullPath string
	Hops     int
}

// AliasDef is one output value fed by alternative paths (first present
// wins), each through a mapper.
type AliasDef struct {
	Name  string
	Type  string
	Paths []AliasPath
}

// AliasPath is one alternative of an alias.
type AliasPath struct {
	Path   string
	Hops   int
	Mapper string
}

// Node is a condition tree node: a group (Op AND/OR/NOT) or a leaf.
type Node struct {
	Group    string
	Children []*Node
	Leaf     *Leaf
	// Raw is a REST array condition, handed to the predicate as it is.
	Raw json.RawMessage
}

// Leaf is one comparison. Op is a predicate operator name, or
// "BETWEEN_EXCLUSIVE" (the Joda Between bean, both bounds exclusive).
type Leaf struct {
	Field string
	// Meta marks a REST lifecycle condition (Field is a lifecycle name).
	Meta  bool
	Op    string
	Value json.RawMessage
	From  json.RawMessage
	To    json.RawMessage
	// Type is the operand's @type, when given.
	Type string
}

func badDef(msg string, props ...apierr.Prop) error {
	return apierr.New(apierr.BadRequest, "stream definition: "+msg, props...)
}

// object decodes raw as a JSON object; null or absent gives nil.
func object(raw json.RawMessage, what string) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, badDef(what+" must be an object", apierr.P("field", what))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, badDef(what+" does not parse: "+err.Error(), apierr.P("field", what))
	}
	return m, nil
}

// items reads a plain JSON array or a Joda array wrapper
// {"@meta": "X[]", "value": [...]}; null or absent gives nil.
func items(raw json.RawMessage, what string) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '{' {
		m, err := object(raw, what)
		if err != nil {
			return nil, err
		}
		v, ok := m["value"]
		if !ok {
			return nil, badDef(what+" must be an array or a {\"@meta\", \"value\"} array wrapper", apierr.P("field", what))
		}
		return items(v, what)
	}
	if raw[0] != '[' {
		return nil, badDef(what+" must be an array", apierr.P("field", what))
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, badDef(what+" does not parse: "+err.Error(), apierr.P("field", what))
	}
	return out, nil
}

func str(m map[string]json.RawMessage, key string) (string, error) {
	raw := bytes.TrimSpace(m[key])
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", badDef(key+" must be a string", apierr.P("field", key))
	}
	return s, nil
}

// typed unwraps a Joda typed value {"@type": T, "value": v}; other values
// are returned as they are.
func typed(raw json.RawMessage) (json.RawMessage, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return raw, ""
	}
	var w struct {
		Type  string          `json:"@type"`
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(raw, &w) != nil {
		return raw, ""
	}
	if w.Type == "" && w.Value == nil {
		return raw, ""
	}
	return w.Value, w.Type
}

// ParseDef reads a streamDataDef in any of the accepted forms.
func ParseDef(raw json.RawMessage) (*Def, error) {
	if len(raw) > MaxDefBytes {
		return nil, badDef("definition exceeds " + strconv.Itoa(MaxDefBytes) + " bytes")
	}
	m, err := object(raw, "streamDataDef")
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, badDef("streamDataDef is missing", apierr.P("field", "streamDataDef"))
	}
	d := &Def{ColDefs: map[string]*ColDef{}, Aliases: map[string]*AliasDef{}, digest: sha256.Sum256(bytes.TrimSpace(raw))}
	if d.RequestClass, err = str(m, "requestClass"); err != nil {
		return nil, err
	}
	order, err := str(m, "rangeOrder")
	if err != nil {
		return nil, err
	}
	switch order {
	case "", "ASC":
	case "DESC":
		d.Desc = true
	default:
		return nil, badDef("rangeOrder must be ASC or DESC, got "+strconv.Quote(order), apierr.P("field", "rangeOrder"))
	}
	p := &condParser{}
	if d.Cond, err = p.parse(m["condition"], 0); err != nil {
		return nil, err
	}
	if d.Range, err = p.parse(m["rangeCondition"], 0); err != nil {
		return nil, err
	}
	if d.Range != nil && d.Range.Leaf == nil {
		return nil, badDef("rangeCondition must be one condition on the range field, not a group", apierr.P("field", "rangeCondition"))
	}
	if err := d.parseColDefs(m["colDefs"]); err != nil {
		return nil, err
	}
	if err := d.parseAliases(m["aliasDefs"]); err != nil {
		return nil, err
	}
	cols, err := items(m["columns"], "columns")
	if err != nil {
		return nil, err
	}
	for _, c := range cols {
		cm, err := object(c, "columns[]")
		if err != nil {
			return nil, err
		}
		name, err := str(cm, "name")
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, badDef("a column has no name", apierr.P("field", "columns"))
		}
		bean, _ := str(cm, "@bean")
		typ, _ := str(cm, "type")
		alias := strings.HasSuffix(bean, "ReportAliasColumn") || typ == "ALIAS"
		if alias && d.Aliases[name] == nil {
			return nil, badDef("alias column "+strconv.Quote(name)+" has no aliasDefs entry", apierr.P("path", name))
		}
		d.Columns = append(d.Columns, Column{Name: name, Alias: alias})
	}
	return d, nil
}

func (d *Def) parseColDefs(raw json.RawMessage) error {
	list, err := items(raw, "colDefs")
	if err != nil {
		return err
	}
	for _, c := range list {
		cd, err := parseColDef(c)
		if err != nil {
			return err
		}
		d.ColDefs[cd.FullPath] = cd
	}
	return nil
}

func parseColDef(raw json.RawMessage) (*ColDef, error) {
	m, err := object(raw, "colDefs[]")
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, badDef("a column definition is null", apierr.P("field", "colDefs"))
	}
	full, err := str(m, "fullPath")
	if err != nil {
		return nil, err
	}
	parts, err := items(m["parts"], "colDefs[].parts")
	if err != nil {
		return nil, err
	}
	if full == "" && len(parts) == 1 {
		pm, err := object(parts[0], "colDefs[].parts[]")
		if err != nil {
			return nil, err
		}
		if full, err = str(pm, "path"); err != nil {
			return nil, err
		}
	}
	if full == "" {
		return nil, badDef("a column definition has no fullPath", apierr.P("field", "colDefs"))
	}
	return &ColDef{FullPath: full, Hops: len(parts)}, nil
}

func (d *Def) parseAliases(raw json.RawMessage) error {
	list, err := items(raw, "aliasDefs")
	if err != nil {
		return err
	}
	for _, a := range list {
		m, err := object(a, "aliasDefs[]")
		if err != nil {
			return err
		}
		if m == nil {
			return badDef("an alias definition is null", apierr.P("field", "aliasDefs"))
		}
		ad := &AliasDef{}
		if ad.Name, err = str(m, "name"); err != nil {
			return err
		}
		if ad.Name == "" {
			return badDef("an alias definition has no name", apierr.P("field", "aliasDefs"))
		}
		if ad.Type, err = str(m, "aliasType"); err != nil {
			return err
		}
		paths, err := items(m["aliasPaths"], "aliasDefs[].aliasPaths")
		if err != nil {
			return err
		}
		for _, p := range paths {
			pm, err := object(p, "aliasPaths[]")
			if err != nil {
				return err
			}
			if pm == nil {
				continue
			}
			ap := AliasPath{}
			if ap.Mapper, err = str(pm, "mapperClass"); err != nil {
				return err
			}
			if cd := bytes.TrimSpace(pm["colDef"]); len(cd) > 0 && cd[0] == '"' {
				if ap.Path, err = str(pm, "colDef"); err != nil {
					return err
				}
				ap.Hops = 1
			} else {
				c, err := parseColDef(cd)
				if err != nil {
					return err
				}
				ap.Path, ap.Hops = c.FullPath, c.Hops
			}
			ad.Paths = append(ad.Paths, ap)
		}
		if len(ad.Paths) == 0 {
			return badDef("alias "+strconv.Quote(ad.Name)+" has no paths", apierr.P("path", ad.Name))
		}
		d.Aliases[ad.Name] = ad
	}
	return nil
}

type condParser struct{ nodes int }

// beanOps maps the Joda condition beans (by simple name) to operators;
// the bean wins over the operation key (IContains is sent as CONTAINS).
var beanOps = map[string]string{
	"Equals": "EQUALS", "GreaterThan": "GREATER_THAN", "LessThan": "LESS_THAN",
	"GreaterThanEquals": "GREATER_OR_EQUAL", "LessThanEquals": "LESS_OR_EQUAL",
	"Between": "BETWEEN_EXCLUSIVE", "BetweenInclusive": "BETWEEN_INCLUSIVE", "Like": "LIKE",
	"NotEquals": "NOT_EQUAL", "IEquals": "IEQUALS", "INotEquals": "INOT_EQUAL",
	"IContains": "ICONTAINS", "IStartsWith": "ISTARTS_WITH", "IEndsWith": "IENDS_WITH",
	"INotContains": "INOT_CONTAINS", "INotStartsWith": "INOT_STARTS_WITH", "INotEndsWith": "INOT_ENDS_WITH",
	"NotEndsWith": "NOT_ENDS_WITH", "IsNull": "IS_NULL", "NotNull": "NOT_NULL",
	"Contains": "CONTAINS", "StartsWith": "STARTS_WITH", "EndsWith": "ENDS_WITH",
	"NotContains": "NOT_CONTAINS", "NotStartsWith": "NOT_STARTS_WITH",
	"IsChanged": "IS_CHANGED", "IsUnchanged": "IS_UNCHANGED",
}

// opNames maps Joda operation keys to predicate names where they differ.
var opNames = map[string]string{
	"BETWEEN": "BETWEEN_EXCLUSIVE", "GREATER_THAN_OR_EQUAL": "GREATER_OR_EQUAL",
	"LESS_THAN_OR_EQUAL": "LESS_OR_EQUAL", "NOT_EQUALS": "NOT_EQUAL",
}

func simpleName(bean string) string {
	if i := strings.LastIndexByte(bean, '.'); i >= 0 {
		return bean[i+1:]
	}
	return bean
}

func (p *condParser) parse(raw json.RawMessage, depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, badDef("condition nesting exceeds " + strconv.Itoa(maxDepth) + " levels")
	}
	if p.nodes++; p.nodes > maxNodes {
		return nil, badDef("condition has more than " + strconv.Itoa(maxNodes) + " nodes")
	}
	m, err := object(raw, "condition")
	if err != nil || m == nil {
		return nil, err
	}
	if _, ok := m["type"]; ok {
		return p.rest(m, raw, depth)
	}
	bean, err := str(m, "@bean")
	if err != nil {
		return nil, err
	}
	_, hasConds := m["conditions"]
	if strings.HasSuffix(bean, "GroupCondition") || (bean == "" && hasConds) {
		op, err := str(m, "operator")
		if err != nil {
			return nil, err
		}
		return p.group(op, m["conditions"], depth)
	}
	l := &Leaf{}
	if l.Field, err = str(m, "fieldName"); err != nil {
		return nil, err
	}
	op, err := str(m, "operation")
	if err != nil {
		return nil, err
	}
	if bo, ok := beanOps[simpleName(bean)]; ok {
		op = bo
	} else if bean != "" {
		return nil, badDef("condition bean "+strconv.Quote(bean)+" cannot be served", apierr.P("operator", bean))
	}
	if alt, ok := opNames[op]; ok {
		op = alt
	}
	l.Op = op
	l.Value, l.Type = typed(m["value"])
	l.From, _ = typed(m["from"])
	l.To, _ = typed(m["to"])
	if err := checkLeaf(l); err != nil {
		return nil, err
	}
	return &Node{Leaf: l}, nil
}

func (p *condParser) group(op string, conds json.RawMessage, depth int) (*Node, error) {
	switch op {
	case "", "AND":
		op = "AND"
	case "OR", "NOT":
	default:
		return nil, badDef("group operator must be AND, OR or NOT, got "+strconv.Quote(op), apierr.P("operator", op))
	}
	list, err := items(conds, "conditions")
	if err != nil {
		return nil, err
	}
	n := &Node{Group: op}
	for _, c := range list {
		ch, err := p.parse(c, depth+1)
		if err != nil {
			return nil, err
		}
		if ch != nil {
			n.Children = append(n.Children, ch)
		}
	}
	if op == "NOT" && len(n.Children) != 1 {
		return nil, badDef("a NOT group needs exactly one condition", apierr.P("operator", "NOT"))
	}
	return n, nil
}

// rest reads a REST search condition (docs/decisions/0020-conditions.md).
func (p *condParser) rest(m map[string]json.RawMessage, raw json.RawMessage, depth int) (*Node, error) {
	typ, err := str(m, "type")
	if err != nil {
		return nil, err
	}
	switch typ {
	case "group":
		op, err := str(m, "operator")
		if err != nil {
			return nil, err
		}
		return p.group(op, m["conditions"], depth)
	case "array":
		return &Node{Raw: append(json.RawMessage(nil), raw...)}, nil
	case "function":
		return nil, badDef("function conditions cannot be served by stream data", apierr.P("operator", "function"))
	case "simple", "lifecycle":
	default:
		return nil, badDef("unknown condition type "+strconv.Quote(typ), apierr.P("field", "type"))
	}
	l := &Leaf{Meta: typ == "lifecycle"}
	key := "jsonPath"
	if l.Meta {
		key = "field"
	}
	if l.Field, err = str(m, key); err != nil {
		return nil, err
	}
	for _, k := range []string{"operatorType", "operator", "operation"} {
		if l.Op, err = str(m, k); err != nil {
			return nil, err
		}
		if l.Op != "" {
			break
		}
	}
	if alt, ok := map[string]string{"GREATER_THAN_OR_EQUAL": "GREATER_OR_EQUAL", "LESS_THAN_OR_EQUAL": "LESS_OR_EQUAL",
		"NOT_EQUALS": "NOT_EQUAL"}[l.Op]; ok {
		l.Op = alt
	}
	l.Value, l.Type = typed(m["value"])
	if l.Op == "BETWEEN" || l.Op == "BETWEEN_INCLUSIVE" {
		// REST ranges carry [from, to] in value.
		var pair []json.RawMessage
		if json.Unmarshal(l.Value, &pair) != nil || len(pair) != 2 {
			return nil, badDef("operator "+l.Op+" needs value [from, to]", apierr.P("operator", l.Op))
		}
		l.From, l.To, l.Value = pair[0], pair[1], nil
		l.Op = "BETWEEN_INCLUSIVE"
	}
	if err := checkLeaf(l); err != nil {
		return nil, err
	}
	return &Node{Leaf: l}, nil
}

// served are the operators a stream definition can be compiled to.
var served = map[string]bool{
	"EQUALS": true, "NOT_EQUAL": true, "GREATER_THAN": true, "LESS_THAN": true, "GREATER_OR_EQUAL": true,
	"LESS_OR_EQUAL": true, "BETWEEN_EXCLUSIVE": true, "BETWEEN_INCLUSIVE": true, "LIKE": true, "IEQUALS": true,
	"INOT_EQUAL": true, "ICONTAINS": true, "ISTARTS_WITH": true, "IENDS_WITH": true, "INOT_CONTAINS": true,
	"INOT_STARTS_WITH": true, "INOT_ENDS_WITH": true, "NOT_ENDS_WITH": true, "IS_NULL": true, "NOT_NULL": true,
	"CONTAINS": true, "STARTS_WITH": true, "ENDS_WITH": true, "NOT_CONTAINS": true, "NOT_STARTS_WITH": true,
	"MATCHES_PATTERN": true,
}

func checkLeaf(l *Leaf) error {
	if l.Field == "" {
		return badDef("a condition has no field", apierr.P("field", "fieldName"))
	}
	if l.Op == "" {
		return badDef("condition on "+strconv.Quote(l.Field)+" has no operation", apierr.P("path", l.Field))
	}
	if !served[l.Op] {
		return badDef("operator "+strconv.Quote(l.Op)+" on "+strconv.Quote(l.Field)+" cannot be served by stream data",
			apierr.P("operator", l.Op), apierr.P("path", l.Field))
	}
	if strings.HasPrefix(l.Op, "BETWEEN") && (len(l.From) == 0 || len(l.To) == 0) {
		return badDef("operator "+l.Op+" on "+strconv.Quote(l.Field)+" needs from and to", apierr.P("operator", l.Op))
	}
	return nil
}
