package streamdata

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/entity"
	"svc/platform/apierr"
	"svc/storage"
)

// Planner compiles a condition and sort keys the way search does;
// search.Service implements it.
type Planner interface {
	Plan(ctx context.Context, tenant string, key storage.ModelKey, cond []byte, sort []string) (*storage.SearchQuery, error)
}

// Plan is a compiled definition: the search plan (condition and range
// condition together, sort on the range field) and the column extractors.
type Plan struct {
	Model storage.ModelKey
	Query *storage.SearchQuery
	Range storage.SortKey
	// RangeField is the range field as resolved ($.a.b or a lifecycle name).
	RangeField string
	rangeRef   ref
	// CondJSON is the REST condition compiled (nil: every entity).
	CondJSON []byte
	cols     []column
	eq       []storage.EqHint
	// docCols: some column reads the document.
	docCols bool
}

type column struct {
	name  string
	paths []ref
	maps  []string
}

// resolveModel reads requestClass: "<name>.<version>" or a model id.
func resolveModel(ctx context.Context, models storage.Models, tenant, class string) (storage.ModelKey, error) {
	notFound := apierr.New(apierr.ModelNotFound, "entity class "+strconv.Quote(class)+" is not a model of this tenant",
		apierr.P("entityClass", class))
	if class == "" {
		return storage.ModelKey{}, badDef("requestClass is missing", apierr.P("field", "requestClass"))
	}
	if id, err := uuid.Parse(class); err == nil && len(class) == 36 {
		ms, err := models.ListModels(ctx, tenant)
		if err != nil {
			return storage.ModelKey{}, err
		}
		for _, m := range ms {
			if entity.ModelID(m.Key) == id {
				return m.Key, nil
			}
		}
		return storage.ModelKey{}, notFound
	}
	i := strings.LastIndexByte(class, '.')
	if i <= 0 {
		return storage.ModelKey{}, notFound
	}
	v, err := strconv.Atoi(class[i+1:])
	if err != nil || v < 0 {
		return storage.ModelKey{}, notFound
	}
	key := storage.ModelKey{Name: class[:i], Version: v}
	if _, err := models.GetModel(ctx, tenant, key); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return storage.ModelKey{}, notFound
		}
		return storage.ModelKey{}, err
	}
	return key, nil
}

// compiler turns a Def into REST condition JSON.
type compiler struct{ d *Def }

func (c *compiler) field(l *Leaf) ([]ref, *AliasDef, error) {
	if l.Meta {
		if _, ok := metaNames[l.Field]; !ok || metaNames[l.Field] == "" {
			return nil, nil, badPath(l.Field, "it is not a lifecycle field a condition can use")
		}
		return []ref{{meta: l.Field, path: metaNames[l.Field]}}, nil, nil
	}
	if a := c.d.Aliases[l.Field]; a != nil {
		refs := make([]ref, 0, len(a.Paths))
		for _, p := range a.Paths {
			r, err := resolvePath(p.Path, p.Hops)
			if err != nil {
				return nil, nil, err
			}
			refs = append(refs, r)
		}
		return refs, a, nil
	}
	hops := 1
	if cd := c.d.ColDefs[l.Field]; cd != nil {
		hops = cd.Hops
	}
	r, err := resolvePath(l.Field, hops)
	if err != nil {
		return nil, nil, err
	}
	return []ref{r}, nil, nil
}

// node renders n as a REST condition; nil means "every entity".
func (c *compiler) node(n *Node) ([]byte, error) {
	if n == nil {
		return nil, nil
	}
	if n.Raw != nil {
		return n.Raw, nil
	}
	if n.Leaf != nil {
		return c.leaf(n.Leaf)
	}
	var parts [][]byte
	for _, ch := range n.Children {
		b, err := c.node(ch)
		if err != nil {
			return nil, err
		}
		if b != nil {
			parts = append(parts, b)
		}
	}
	if len(parts) == 0 {
		// An empty group matches everything (the UI's default OR).
		if n.Group == "NOT" {
			return nil, badDef("a NOT group needs one condition", apierr.P("operator", "NOT"))
		}
		return nil, nil
	}
	if n.Group == "NOT" && len(parts) != 1 {
		return nil, badDef("a NOT group needs exactly one condition", apierr.P("operator", "NOT"))
	}
	return group(n.Group, parts), nil
}

func group(op string, parts [][]byte) []byte {
	b := []byte(`{"type":"group","operator":"` + op + `","conditions":[`)
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p...)
	}
	return append(b, "]}"...)
}

func (c *compiler) leaf(l *Leaf) ([]byte, error) {
	refs, alias, err := c.field(l)
	if err != nil {
		return nil, err
	}
	if alias == nil {
		return leafOn(refs[0], l)
	}
	// An alias is its first present path: path i decides when every
	// earlier path is absent.
	var alts [][]byte
	for i, r := range refs {
		cond, err := leafOn(r, l)
		if err != nil {
			return nil, err
		}
		conj := [][]byte{cond}
		for _, prev := range refs[:i] {
			null, err := leafOn(prev, &Leaf{Field: l.Field, Op: "IS_NULL"})
			if err != nil {
				return nil, err
			}
			conj = append(conj, null)
		}
		alts = append(alts, group("AND", conj))
	}
	return group("OR", alts), nil
}

// operand normalises a Joda operand: epoch milliseconds of a date type
// become an ISO instant the condition language compares.
func operand(raw json.RawMessage, typ string, meta bool) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	if (meta || strings.Contains(typ, "Date") || strings.Contains(typ, "Instant")) && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		if ms, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return json.RawMessage(strconv.Quote(time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")))
		}
	}
	return raw
}

func leafOn(r ref, l *Leaf) ([]byte, error) {
	head := `{"type":"simple","jsonPath":` + strconv.Quote(r.path)
	temporal := false
	if r.meta != "" {
		if r.path == "" {
			return nil, badPath(r.meta, "a condition cannot use it")
		}
		head = `{"type":"lifecycle","field":` + strconv.Quote(r.path)
		temporal = r.path == "creationDate" || r.path == "lastUpdateTime"
	}
	op := func(name string, value []byte) []byte {
		b := []byte(head + `,"operatorType":"` + name + `"`)
		if value != nil {
			b = append(b, `,"value":`...)
			b = append(b, value...)
		}
		return append(b, '}')
	}
	switch l.Op {
	case "IS_NULL", "NOT_NULL":
		return op(l.Op, nil), nil
	case "BETWEEN_EXCLUSIVE":
		return group("AND", [][]byte{op("GREATER_THAN", operand(l.From, l.Type, temporal)),
			op("LESS_THAN", operand(l.To, l.Type, temporal))}), nil
	case "BETWEEN_INCLUSIVE":
		v := append([]byte{'['}, operand(l.From, l.Type, temporal)...)
		v = append(v, ',')
		v = append(append(v, operand(l.To, l.Type, temporal)...), ']')
		return op("BETWEEN_INCLUSIVE", v), nil
	}
	return op(l.Op, operand(l.Value, l.Type, temporal)), nil
}

// rangeSort is the sort key spec of the range field for search's parser.
func rangeSort(r ref, desc bool) (string, error) {
	var s string
	if r.meta != "" {
		if r.path == "" {
			return "", badPath(r.meta, "it cannot be a range field")
		}
		s = "@" + r.path
	} else {
		if r.many() {
			return "", badPath(r.path, "a range field must hold one value per entity, and this path crosses an array")
		}
		names := make([]string, len(r.segs))
		for i, sg := range r.segs {
			names[i] = sg.name
		}
		s = strings.Join(names, ".")
	}
	if desc {
		s += ":desc"
	}
	return s, nil
}

// mappers are the alias mappers stream data applies.
var mappers = map[string]bool{
	"": true, "BasicMapper": true, "IdentityMapper": true, "NumberMapper": true, "StringToIntegerMapper": true,
	"DateFormatMapper": true, "BooleanMapper": true, "ListToStringMapper": true,
}

// Check resolves every path, operator and mapper of d without a model:
// what a definition can never be served with is a 400 when it is saved.
func Check(d *Def) error {
	_, _, err := build(d)
	return err
}

// build compiles the model-independent part of d: the condition JSON, the
// range field's sort spec and the column extractors.
func build(d *Def) (*Plan, string, error) {
	c := &compiler{d: d}
	p := &Plan{}
	// The range field: the one leaf of rangeCondition (creationDate
	// ascending when there is none).
	rref := ref{meta: "creationDate", path: "creationDate"}
	var rangeCond []byte
	if d.Range != nil {
		refs, alias, err := c.field(d.Range.Leaf)
		if err != nil {
			return nil, "", err
		}
		if alias != nil {
			return nil, "", badPath(d.Range.Leaf.Field, "an alias cannot be a range field")
		}
		rref = refs[0]
		if rangeCond, err = leafOn(rref, d.Range.Leaf); err != nil {
			return nil, "", err
		}
	}
	spec, err := rangeSort(rref, d.Desc)
	if err != nil {
		return nil, "", err
	}
	cond, err := c.node(d.Cond)
	if err != nil {
		return nil, "", err
	}
	switch {
	case cond != nil && rangeCond != nil:
		p.CondJSON = group("AND", [][]byte{rangeCond, cond})
	case cond != nil:
		p.CondJSON = cond
	default:
		p.CondJSON = rangeCond
	}
	p.RangeField, p.rangeRef = rref.path, rref
	p.eq = eqHints(c, d)
	for _, col := range d.Columns {
		cc := column{name: col.Name}
		if col.Alias {
			a := d.Aliases[col.Name]
			for _, ap := range a.Paths {
				r, err := resolvePath(ap.Path, ap.Hops)
				if err != nil {
					return nil, "", err
				}
				m := simpleName(ap.Mapper)
				if !mappers[m] {
					return nil, "", badDef("alias "+strconv.Quote(a.Name)+" uses mapper "+strconv.Quote(ap.Mapper)+", which cannot be served",
						apierr.P("path", a.Name), apierr.P("mapper", ap.Mapper))
				}
				cc.paths, cc.maps = append(cc.paths, r), append(cc.maps, m)
			}
		} else {
			hops := 1
			if cd := d.ColDefs[col.Name]; cd != nil {
				hops = cd.Hops
			}
			r, err := resolvePath(col.Name, hops)
			if err != nil {
				return nil, "", err
			}
			cc.paths, cc.maps = []ref{r}, []string{""}
		}
		for _, r := range cc.paths {
			if r.meta == "" {
				p.docCols = true
			}
		}
		p.cols = append(p.cols, cc)
	}
	return p, spec, nil
}

// Compile resolves and compiles d for the tenant: the model, then the
// search plan of the condition and range field (the model's paths and
// types checked as search checks them).
func Compile(ctx context.Context, models storage.Models, pl Planner, tenant string, d *Def) (*Plan, error) {
	p, spec, err := build(d)
	if err != nil {
		return nil, err
	}
	key, err := resolveModel(ctx, models, tenant, d.RequestClass)
	if err != nil {
		return nil, err
	}
	p.Model = key
	body := p.CondJSON
	if body == nil {
		body = []byte(`{"type":"group","operator":"AND","conditions":[]}`)
	}
	q, err := pl.Plan(ctx, tenant, key, body, []string{spec})
	if err != nil {
		return nil, err
	}
	p.Query, p.Range = q, q.Sort[0]
	q.Sort = nil
	if p.CondJSON == nil {
		q.Cond = nil
	}
	return p, nil
}

// eqHints are the equalities every selected entity satisfies: EQUALS
// leaves of the top-level AND on single-valued data paths whose operand is
// a string no number or boolean could equal, so the text at the path is
// that string.
func eqHints(c *compiler, d *Def) []storage.EqHint {
	var leaves []*Leaf
	if !flatten(d.Cond, &leaves) {
		leaves = nil
	}
	if d.Range != nil {
		leaves = append(leaves, d.Range.Leaf)
	}
	var out []storage.EqHint
	for _, l := range leaves {
		if l.Op != "EQUALS" || l.Meta || d.Aliases[l.Field] != nil {
			continue
		}
		refs, _, err := c.field(l)
		if err != nil || len(refs) != 1 || refs[0].meta != "" || refs[0].many() {
			continue
		}
		var v string
		if json.Unmarshal(l.Value, &v) != nil || v == "" || v == "true" || v == "false" {
			continue
		}
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			continue
		}
		path := make([]string, len(refs[0].segs))
		for i, sg := range refs[0].segs {
			path[i] = sg.name
		}
		out = append(out, storage.EqHint{Path: path, Value: v})
	}
	return out
}
