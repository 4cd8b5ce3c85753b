package streamdata

import (
	"context"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/storage"
)

// PlanNode is one "keys node" of a query plan (docs/decisions/0025-stream-data.md).
type PlanNode struct {
	Type        string      `json:"type"`
	Operator    string      `json:"operator,omitempty"`
	Conditions  []string    `json:"conditions,omitempty"`
	IndexID     string      `json:"indexId,omitempty"`
	IndexValues string      `json:"indexValuesJson,omitempty"`
	Children    []*PlanNode `json:"children,omitempty"`
}

// pleaf is a condition leaf with its field resolved.
type pleaf struct {
	field string // lifecycle name or $.path
	op    string
	value string // operand as JSON text
	text  string
}

// queryable operators can be served by an ordered index.
var queryable = map[string]bool{"EQUALS": true, "GREATER_THAN": true, "LESS_THAN": true, "GREATER_OR_EQUAL": true,
	"LESS_OR_EQUAL": true, "BETWEEN_EXCLUSIVE": true, "BETWEEN_INCLUSIVE": true, "LIKE": true, "STARTS_WITH": true}

type planner struct {
	c   *compiler
	ixs []index
}

func (p *planner) leaf(l *Leaf) (*pleaf, error) {
	refs, alias, err := p.c.field(l)
	if err != nil {
		return nil, err
	}
	pl := &pleaf{op: l.Op}
	if alias != nil || len(refs) != 1 {
		pl.field = l.Field
	} else if refs[0].meta != "" {
		pl.field = refs[0].meta
	} else {
		pl.field = refs[0].path
	}
	switch {
	case strings.HasPrefix(l.Op, "BETWEEN"):
		pl.value = "[" + string(operand(l.From, l.Type, false)) + "," + string(operand(l.To, l.Type, false)) + "]"
	case l.Op == "IS_NULL" || l.Op == "NOT_NULL":
	default:
		pl.value = string(operand(l.Value, l.Type, false))
	}
	pl.text = strings.TrimSpace(pl.field + " " + l.Op + " " + pl.value)
	if alias != nil {
		return pl, nil // an alias is a residual: it is several paths
	}
	return pl, nil
}

// ServedBy names a ready index whose range field is f and has no
// equality fields.
func (p *planner) simpleIndex(f string) *index {
	for i := range p.ixs {
		ix := &p.ixs[i]
		if ix.ready && ix.rangePath == f && len(ix.eqPaths) == 0 {
			return ix
		}
	}
	return nil
}

// original mirrors the condition as written: a leaf is SIMPLE when an index
// can serve it, CONSTRAINT otherwise.
func (p *planner) original(n *Node) (*PlanNode, error) {
	if n == nil {
		return &PlanNode{Type: "ALL"}, nil
	}
	if n.Raw != nil {
		return &PlanNode{Type: "CONSTRAINT", Conditions: []string{string(n.Raw)}}, nil
	}
	if n.Leaf != nil {
		l, err := p.leaf(n.Leaf)
		if err != nil {
			return nil, err
		}
		t := "CONSTRAINT"
		if queryable[l.op] && (l.field == "id" && l.op == "EQUALS" || p.simpleIndex(l.field) != nil) {
			t = "SIMPLE"
		}
		return &PlanNode{Type: t, Conditions: []string{l.text}}, nil
	}
	g := &PlanNode{Type: "CONSTRAINT", Operator: n.Group}
	for _, ch := range n.Children {
		c, err := p.original(ch)
		if err != nil {
			return nil, err
		}
		g.Children = append(g.Children, c)
	}
	if len(g.Children) == 0 {
		return &PlanNode{Type: "ALL"}, nil
	}
	return g, nil
}

// flatten collects the leaves of nested AND groups; ok is false when the
// tree holds anything else (OR, NOT, array conditions).
func flatten(n *Node, out *[]*Leaf) bool {
	switch {
	case n == nil:
		return true
	case n.Leaf != nil:
		*out = append(*out, n.Leaf)
		return true
	case n.Raw != nil:
		return false
	case n.Group == "AND":
		for _, ch := range n.Children {
			if !flatten(ch, out) {
				return false
			}
		}
		return true
	}
	return len(n.Children) == 0
}

// optimized rewrites the condition: flatten AND groups, detect equality
// contradictions (EMPTY), id equality (SINGLE), a composite index whose
// equality fields are all pinned (COMPOSITE), other index-served leaves
// (SIMPLE), residuals (CONSTRAINT), and ALL when nothing narrows the scan.
func (p *planner) optimized(n *Node) (*PlanNode, error) {
	var raw []*Leaf
	if !flatten(n, &raw) {
		// OR, NOT and array conditions are evaluated on every candidate.
		o, err := p.original(n)
		if err != nil {
			return nil, err
		}
		return &PlanNode{Type: "ALL", Children: []*PlanNode{constraintOf(o)}}, nil
	}
	leaves := make([]*pleaf, 0, len(raw))
	eq := map[string]string{}
	for _, l := range raw {
		pl, err := p.leaf(l)
		if err != nil {
			return nil, err
		}
		if pl.op == "EQUALS" {
			if v, ok := eq[pl.field]; ok && v != pl.value {
				return &PlanNode{Type: "EMPTY", Conditions: []string{pl.text}}, nil
			}
			eq[pl.field] = pl.value
		}
		leaves = append(leaves, pl)
	}
	used := make([]bool, len(leaves))
	var drive *PlanNode
	for i, l := range leaves {
		if l.field == "id" && l.op == "EQUALS" {
			drive, used[i] = &PlanNode{Type: "SINGLE", Conditions: []string{l.text}}, true
			break
		}
	}
	if drive == nil {
		drive = p.composite(leaves, used)
	}
	if drive == nil {
		for i, l := range leaves {
			if queryable[l.op] && p.simpleIndex(l.field) != nil {
				ix := p.simpleIndex(l.field)
				drive = &PlanNode{Type: "SIMPLE", Conditions: []string{l.text}, IndexID: uuid.UUID(ix.id).String()}
				used[i] = true
				break
			}
		}
	}
	if drive == nil {
		drive = &PlanNode{Type: "ALL"}
	}
	for i, l := range leaves {
		if !used[i] {
			drive.Children = append(drive.Children, &PlanNode{Type: "CONSTRAINT", Conditions: []string{l.text}})
		}
	}
	return drive, nil
}

func constraintOf(o *PlanNode) *PlanNode {
	o.Type = "CONSTRAINT"
	for _, ch := range o.Children {
		constraintOf(ch)
	}
	return o
}

// composite picks the ready user index with the most equality fields all
// pinned by EQUALS leaves.
func (p *planner) composite(leaves []*pleaf, used []bool) *PlanNode {
	var best *index
	for i := range p.ixs {
		ix := &p.ixs[i]
		if !ix.ready || len(ix.eqPaths) == 0 || (best != nil && len(best.eqPaths) >= len(ix.eqPaths)) {
			continue
		}
		all := true
		for _, f := range ix.eqPaths {
			found := false
			for _, l := range leaves {
				if l.field == f && l.op == "EQUALS" {
					found = true
				}
			}
			all = all && found
		}
		if all {
			best = ix
		}
	}
	if best == nil {
		return nil
	}
	n := &PlanNode{Type: "COMPOSITE", IndexID: uuid.UUID(best.id).String()}
	vals := make([]json.RawMessage, 0, len(best.eqPaths))
	for _, f := range best.eqPaths {
		for i, l := range leaves {
			if l.field == f && l.op == "EQUALS" && !used[i] {
				used[i] = true
				n.Conditions = append(n.Conditions, l.text)
				vals = append(vals, json.RawMessage(l.value))
				break
			}
		}
	}
	for i, l := range leaves {
		if !used[i] && l.field == best.rangePath && queryable[l.op] {
			used[i] = true
			n.Conditions = append(n.Conditions, l.text)
		}
	}
	vj, _ := json.Marshal(vals)
	n.IndexValues = string(vj)
	return n
}

// QueryPlan is the answer of query-plan: the plan nodes of the
// condition as given and as optimized, and (svc extensions) the index that
// serves it, the index that would, and on PostgreSQL the plan of the first
// page's statement.
type QueryPlan struct {
	Original, Optimized *PlanNode
	ServedBy            *ServedBy
	Suggested           []Suggestion
	// Explained is set on PostgreSQL: PgExplain (EXPLAIN FORMAT JSON),
	// PgSQL (the statement) and IndexesUsed (the indexes that plan reads)
	// are filled. Without it the plan nodes are all there is.
	Explained   bool
	PgExplain   json.RawMessage
	PgSQL       string
	IndexesUsed []string
}

// QueryPlan plans definition d (its condition and range condition) over
// its model.
func (s *Service) QueryPlan(ctx context.Context, tenant string, d *Def) (*QueryPlan, error) {
	pl, err := Compile(ctx, s.models, s.planner, tenant, d)
	if err != nil {
		return nil, err
	}
	ixs, err := s.indexesOf(ctx, tenant, pl.Model)
	if err != nil {
		return nil, err
	}
	pp := &planner{c: &compiler{d: d}, ixs: ixs}
	cond := d.Cond
	if d.Range != nil {
		cond = &Node{Group: "AND", Children: []*Node{d.Range}}
		if d.Cond != nil {
			cond.Children = append(cond.Children, d.Cond)
		}
	}
	orig, err := pp.original(cond)
	if err != nil {
		return nil, err
	}
	opt, err := pp.optimized(cond)
	if err != nil {
		return nil, err
	}
	out := &QueryPlan{Original: orig, Optimized: opt}
	if out.ServedBy, out.Suggested, err = s.advise(ctx, tenant, pl.Model, pp, opt, cond, d); err != nil {
		return nil, err
	}
	if s.explain != nil {
		q := &storage.StreamQuery{Search: *pl.Query, Range: pl.Range, Limit: DefaultPage, Eq: pl.eq}
		at := s.now()
		q.Search.At = &at
		if out.PgExplain, out.PgSQL, err = s.explain.ExplainStream(ctx, q); err != nil {
			return nil, err
		}
		out.Explained = true
		out.IndexesUsed = indexNames(out.PgExplain)
	}
	return out, nil
}

// ServedBy names the index the optimized plan reads (svc extension).
type ServedBy struct {
	IndexID   string `json:"indexId"`
	IndexName string `json:"indexName"`
	Persisted bool   `json:"persisted"`
}

// Suggestion is an index that would serve the definition (svc
// extension): the composite-index extension's body and, on PostgreSQL,
// the statement it would run.
type Suggestion struct {
	EntityClass string   `json:"entityClass"`
	Name        string   `json:"name"`
	RangeColumn string   `json:"rangeColPath"`
	Columns     []string `json:"columns"`
	DDL         string   `json:"ddl,omitempty"`
}

// advise reports the index serving opt and, when none serves every
// equality of the condition (or none serves at all), the composite index
// that would: the EQUALS fields of the AND-flattened condition as
// equality columns and the range field (the definition's range condition,
// else the condition's first ordering leaf, else creationDate, the UI's
// default) as its range.
func (s *Service) advise(ctx context.Context, tenant string, key storage.ModelKey, pp *planner, opt *PlanNode, cond *Node, d *Def) (*ServedBy, []Suggestion, error) {
	var served *ServedBy
	var by *index
	for i := range pp.ixs {
		if ix := &pp.ixs[i]; opt.IndexID != "" && uuid.UUID(ix.id).String() == opt.IndexID {
			by = ix
			served = &ServedBy{IndexID: opt.IndexID, IndexName: ix.name, Persisted: ix.persisted}
		}
	}
	out := []Suggestion{}
	if opt.Type == "EMPTY" || opt.Type == "SINGLE" {
		return served, out, nil
	}
	var raw []*Leaf
	if !flatten(cond, &raw) {
		// OR, NOT and array conditions: no index answers them as a whole.
		return served, out, nil
	}
	rangeField := ""
	if d.Range != nil && d.Range.Leaf != nil {
		if l, err := pp.leaf(d.Range.Leaf); err == nil {
			if f, err := normPath(l.field); err == nil {
				rangeField = f
			}
		}
	}
	var eq []string
	seen := map[string]bool{}
	for _, l := range raw {
		pl, err := pp.leaf(l)
		if err != nil {
			return nil, nil, err
		}
		f, err := normPath(pl.field)
		if err != nil || f == "id" {
			continue // aliases, array paths and id are not index fields
		}
		switch {
		case pl.op == "EQUALS" && f != "creationDate" && f != "lastUpdateTime":
			if !seen[f] && len(eq) < 8 {
				seen[f] = true
				eq = append(eq, f)
			}
		case queryable[pl.op] && rangeField == "":
			rangeField = f
		}
	}
	if rangeField == "" {
		rangeField = "creationDate"
	}
	if by != nil && by.rangePath == rangeField && len(by.eqPaths) == len(eq) {
		return served, out, nil // the serving index already covers every equality
	}
	if len(eq) == 0 && by != nil {
		return served, out, nil
	}
	if len(eq) == 0 && (rangeField == "creationDate" || rangeField == "state") {
		return served, out, nil // a built-in index serves it
	}
	// A range field that is also an equality column is pinned: order by
	// creationDate within it instead.
	if seen[rangeField] {
		rangeField = "creationDate"
	}
	name := "sd_" + strings.NewReplacer("$.", "", ".", "_").Replace(strings.Join(append(append([]string{}, eq...), rangeField), "_"))
	if len(name) > 200 {
		name = name[:200]
	}
	sg := Suggestion{EntityClass: key.Name + "." + strconv.Itoa(key.Version), Name: name, RangeColumn: rangeField, Columns: eq}
	if sg.Columns == nil {
		sg.Columns = []string{}
	}
	if s.explain != nil {
		ix, err := s.indexOf(ctx, tenant, key, &IndexSpec{EntityClass: sg.EntityClass, Name: name, RangeColumn: rangeField, Columns: eq})
		if err != nil {
			return nil, nil, err
		}
		// The name the extension would give it is its id's; a fixed id
		// from the Suggestion keeps the advice stable between calls.
		ix.ID = uuid.NewSHA1(uuid.NameSpaceURL, []byte("svc:stream-index-advice:"+tenant+":"+sg.EntityClass+":"+name))
		if sg.DDL, err = s.explain.IndexDDL(ix); err != nil {
			return nil, nil, err
		}
	}
	return served, append(out, sg), nil
}

// indexNames lists the "Index Name" members of an EXPLAIN (FORMAT JSON)
// document, once each.
func indexNames(plan json.RawMessage) []string {
	var v any
	if json.Unmarshal(plan, &v) != nil {
		return []string{}
	}
	seen := map[string]bool{}
	out := []string{}
	var walk func(any)
	walk = func(x any) {
		switch y := x.(type) {
		case map[string]any:
			for k, v := range y {
				if k == "Index Name" {
					if s, ok := v.(string); ok && !seen[s] {
						seen[s] = true
						out = append(out, s)
					}
				}
				walk(v)
			}
		case []any:
			for _, v := range y {
				walk(v)
			}
		}
	}
	walk(v)
	return out
}
