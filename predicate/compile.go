package predicate

import (
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"svc/platform/apierr"
)

// Meta is an entity's lifecycle fields as conditions see them. An empty
// string counts as present; a zero time as absent.
type Meta struct {
	ID                      string
	State                   string
	CreationDate            time.Time
	LastUpdateTime          time.Time
	TransitionForLatestSave string
	TransactionID           string
}

type metaField uint8

const (
	mState metaField = iota + 1
	mCreationDate
	mLastUpdateTime
	mTransition
	mTransactionID
	mID
)

var metaFields = map[string]metaField{
	"state": mState, "creationDate": mCreationDate, "lastUpdateTime": mLastUpdateTime,
	"transitionForLatestSave": mTransition, "previousTransition": mTransition,
	"transactionId": mTransactionID, "id": mID,
	// current_state is the Python client template's name for the state.
	"current_state": mState,
}

func (f metaField) temporal() bool { return f == mCreationDate || f == mLastUpdateTime }

type nodeKind uint8

const (
	nAnd nodeKind = iota + 1
	nOr
	nNot
	nData
	nMeta
	nFunc
)

type node struct {
	kind     nodeKind
	children []*node
	data     *dataLeaf
	meta     *metaLeaf
	fn       *Function
}

// Condition is a compiled condition: immutable and safe for concurrent use.
// Match evaluates it against an entity; SQL renders it for PostgreSQL.
type Condition struct {
	root  *node
	paths []string
	funcs []*Function
}

// Paths lists the data paths the condition reads, as written, once each.
func (c *Condition) Paths() []string { return c.paths }

// Functions lists the function criteria in evaluation order.
func (c *Condition) Functions() []*Function { return c.funcs }

// HasFunctions reports whether evaluation needs a FunctionCaller.
func (c *Condition) HasFunctions() bool { return len(c.funcs) > 0 }

// numBranch compares stored JSON numbers by exact decimal value.
type numBranch struct{ lo, hi dec }

// strBranch compares stored JSON strings byte-wise (STRING, CHARACTER);
// eqOnly branches (UUID, BYTE_ARRAY) answer only EQUALS and NOT_EQUAL.
type strBranch struct {
	lo, hi string
	eqOnly bool
}

// tempBranch compares stored strings whose own temporal subtype is typ, by
// the start of the period they name.
type tempBranch struct {
	typ    DataType
	lo, hi int64
}

type dataLeaf struct {
	p     *path
	op    Op
	never bool // a null operand, or no branch survived: matches nothing
	// type-directed (compare and range operators)
	num   *numBranch
	str   *strBranch
	boolv int8 // 0: no boolean branch, 1: false, 2: true
	tmp   []tempBranch
	// text operators
	text  string
	lower string
	like  []likeTok
	re    *regexp.Regexp
}

type metaLeaf struct {
	field      metaField
	op         Op
	never      bool
	text, hi   string
	lower      string
	msLo, msHi int64
	like       []likeTok
	re         *regexp.Regexp
}

// Compile checks e against a model and compiles it. With a nil Schema every
// path is accepted and typed AnyType. Errors follow the precedence of docs/decisions/0021-search.md:
// path syntax and unknown paths (INVALID_FIELD_PATH, every unknown path
// listed), then regular expressions (INVALID_CONDITION), then type
// soundness (CONDITION_TYPE_MISMATCH, or INVALID_FIELD_PATH for a
// container path or an unknown lifecycle field).
func (e *Expr) Compile(s Schema) (*Condition, error) {
	c := &compiler{schema: s, seen: map[string]bool{}}
	root := c.node(e)
	switch {
	case c.pathErr != nil:
		return nil, c.pathErr
	case len(c.unknown) > 0:
		return nil, apierr.New(apierr.InvalidFieldPath, "condition references unknown field path(s): "+
			strings.Join(c.unknown, ", "), apierr.P("paths", c.unknown))
	case c.regexErr != nil:
		return nil, c.regexErr
	case c.typeErr != nil:
		return nil, c.typeErr
	}
	return &Condition{root: root, paths: c.paths, funcs: c.funcs}, nil
}

// Compile parses and compiles in one step.
func Compile(data []byte, s Schema) (*Condition, error) {
	e, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return e.Compile(s)
}

type compiler struct {
	schema   Schema
	pathErr  error
	unknown  []string
	regexErr error
	typeErr  error
	paths    []string
	seen     map[string]bool
	funcs    []*Function
}

func (c *compiler) setType(err error) {
	if c.typeErr == nil {
		c.typeErr = err
	}
}

func (c *compiler) node(e *Expr) *node {
	switch e.kind {
	case kGroup:
		n := &node{kind: nAnd}
		if e.group == gOr {
			n.kind = nOr
		} else if e.group == gNot {
			n.kind = nNot
		}
		for _, ch := range e.children {
			n.children = append(n.children, c.node(ch))
		}
		return n
	case kFunction:
		c.funcs = append(c.funcs, e.fn)
		return &node{kind: nFunc, fn: e.fn}
	case kLifecycle:
		return &node{kind: nMeta, meta: c.metaLeaf(e)}
	case kArray:
		return c.arrayNode(e)
	}
	p, kind, types := c.resolve(e.path, "")
	if p == nil {
		return &node{kind: nData, data: &dataLeaf{never: true, op: e.op}}
	}
	if kind == PathContainer && e.op.family() != famPresence {
		c.setType(apierr.New(apierr.InvalidFieldPath, "field "+strconv.Quote(p.raw)+
			" is a container with substructure; navigate to a leaf sub-path", apierr.P("path", p.raw),
			apierr.P("operator", e.op.String())))
	}
	return &node{kind: nData, data: c.dataLeaf(p, e.op, e.value, types)}
}

// resolve parses a path and asks the schema about it (suffix is appended to
// the schema form, for array conditions).
func (c *compiler) resolve(raw, suffix string) (*path, PathKind, TypeSet) {
	p, err := parsePath(raw)
	if err != nil {
		if c.pathErr == nil {
			c.pathErr = err
		}
		return nil, 0, 0
	}
	if !c.seen[p.raw] {
		c.seen[p.raw] = true
		c.paths = append(c.paths, p.raw)
	}
	if c.schema == nil {
		return p, PathLeaf, AnyType
	}
	kind, types := c.schema.Lookup(p.schema + suffix)
	if kind == PathUnknown {
		for _, u := range c.unknown {
			if u == p.raw {
				return nil, 0, 0
			}
		}
		c.unknown = append(c.unknown, p.raw)
		return nil, 0, 0
	}
	return p, kind, types
}

func (c *compiler) arrayNode(e *Expr) *node {
	p, kind, types := c.resolve(e.path, "[*]")
	n := &node{kind: nAnd}
	if p == nil {
		return n
	}
	if kind != PathLeaf {
		c.setType(apierr.New(apierr.InvalidFieldPath, "field "+strconv.Quote(p.raw)+" is not an array of values",
			apierr.P("path", p.raw)))
		return n
	}
	for i, v := range e.values {
		if v.kind == oNull {
			continue
		}
		ep := *p
		ep.segs = append(append([]segment(nil), p.segs...), segment{kind: segIndex, key: "[" + strconv.Itoa(i) + "]", index: i})
		ep.chunks = append([][]string(nil), p.chunks...)
		last := len(ep.chunks) - 1
		ep.chunks[last] = append(append([]string(nil), ep.chunks[last]...), "["+strconv.Itoa(i)+"]")
		ep.raw = p.raw + "[" + strconv.Itoa(i) + "]"
		ep.schema = p.schema + "[*]"
		n.children = append(n.children, &node{kind: nData, data: c.dataLeaf(&ep, OpEquals, v, types)})
	}
	return n
}

func (c *compiler) dataLeaf(p *path, op Op, v operand, types TypeSet) *dataLeaf {
	l := &dataLeaf{p: p, op: op}
	switch op.family() {
	case famPresence:
		return l
	case famCompare, famRange:
		c.typed(l, v, types)
		return l
	}
	if v.kind == oNull || v.kind == oAbsent {
		l.never = true
		return l
	}
	l.text = v.text
	switch op {
	case OpLike:
		l.like = c.likePattern(v.text, p.raw)
	case OpMatchesPattern:
		l.re = c.regex(v.text, p.raw)
		if l.re == nil {
			l.never = true
		}
	default:
		l.lower = strings.ToLower(v.text)
	}
	return l
}

func (c *compiler) likePattern(pat, where string) []likeTok {
	if len(pat) > MaxLikeLen && c.regexErr == nil {
		c.regexErr = invalidCondition("LIKE pattern longer than "+strconv.Itoa(MaxLikeLen)+" bytes",
			apierr.P("path", where), apierr.P("operator", OpLike.String()))
	}
	return compileLike(pat)
}

func (c *compiler) regex(pat, where string) *regexp.Regexp {
	fail := func(msg string) *regexp.Regexp {
		if c.regexErr == nil {
			c.regexErr = invalidCondition("invalid regex pattern in condition: "+msg, apierr.P("path", where),
				apierr.P("operator", OpMatchesPattern.String()))
		}
		return nil
	}
	if len(pat) > MaxRegexLen {
		return fail("pattern longer than " + strconv.Itoa(MaxRegexLen) + " bytes")
	}
	full := `\A(?:` + pat + `)\z`
	re, err := syntax.Parse(full, syntax.Perl)
	if err != nil {
		return fail(err.Error())
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return fail(err.Error())
	}
	if len(prog.Inst) > MaxRegexInst {
		return fail("pattern too large")
	}
	r, err := regexp.Compile(full)
	if err != nil {
		return fail(err.Error())
	}
	return r
}

// typed builds the branches of a compare or range leaf from the declared
// types, and reports an operand that parses into none of them.
func (c *compiler) typed(l *dataLeaf, v operand, types TypeSet) {
	var bounds []operand
	if v.kind == oRange {
		bounds = []operand{*v.lo, *v.hi}
	} else {
		bounds = []operand{v}
	}
	for _, b := range bounds {
		if b.kind == oNull || b.kind == oAbsent {
			l.never = true // a null operand is accepted and matches nothing (Q8)
			return
		}
	}
	if types&^Types(TypeNull) == 0 {
		l.never = true // no declared type: comparisons never match
		return
	}
	eq := l.op == OpEquals || l.op == OpNotEqual
	numOK, strOK, boolOK := true, true, true
	var nums [2]dec
	var tmps [2][numDataTypes]int64
	var tmpOK [numDataTypes]bool
	for t := range numDataTypes {
		tmpOK[t] = types.Has(t) && temporalTypes.Has(t)
	}
	uuidOnly := true
	for i, b := range bounds {
		parsed := false
		if types.any(numericTypes) {
			if d, ok := parseDec([]byte(b.text), true); ok {
				nums[i] = d.own()
				parsed = true
			} else {
				numOK = false
			}
		} else {
			numOK = false
		}
		full := types.Has(TypeString) || (types.Has(TypeCharacter) && utf8.RuneCountInString(b.text) == 1)
		weak := (types.Has(TypeUUID) && isUUID(b.text, false)) || (types.Has(TypeTimeUUID) && isUUID(b.text, true)) ||
			types.Has(TypeByteArray)
		if full || weak {
			parsed = true
			if full {
				uuidOnly = false
			}
		} else {
			strOK = false
		}
		if types.Has(TypeBoolean) && (b.text == "true" || b.text == "false") {
			parsed = true
		} else {
			boolOK = false
		}
		if sub, ms, ok := classifyTemporal([]byte(b.text)); ok {
			for t := range numDataTypes {
				if !tmpOK[t] {
					continue
				}
				if (t == TypeLocalTime) != (sub == TypeLocalTime) {
					tmpOK[t] = false
					continue
				}
				tmps[i][t] = ms
				parsed = true
			}
		} else {
			for t := range tmpOK {
				tmpOK[t] = false
			}
		}
		if !parsed {
			c.setType(apierr.New(apierr.ConditionTypeMismatch, "operand "+b.text+" parses into none of field "+
				strconv.Quote(l.p.raw)+"'s declared types "+types.String(), apierr.P("path", l.p.raw),
				apierr.P("operator", l.op.String()), apierr.P("operand", b.text), apierr.P("types", types.String())))
			l.never = true
			return
		}
	}
	hi := len(bounds) - 1
	if numOK {
		l.num = &numBranch{lo: nums[0], hi: nums[hi]}
	}
	if strOK && (eq || !uuidOnly) {
		l.str = &strBranch{lo: bounds[0].text, hi: bounds[hi].text, eqOnly: uuidOnly}
	}
	if boolOK && eq {
		l.boolv = 1
		if bounds[0].text == "true" {
			l.boolv = 2
		}
	}
	for t := range numDataTypes {
		if tmpOK[t] {
			l.tmp = append(l.tmp, tempBranch{typ: t, lo: tmps[0][t], hi: tmps[hi][t]})
		}
	}
	if l.num == nil && l.str == nil && l.boolv == 0 && len(l.tmp) == 0 {
		l.never = true // a void leaf: parsed, but nothing can match
	}
}

func isUUID(s string, v1 bool) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return !v1 || s[14] == '1'
}

func (c *compiler) metaLeaf(e *Expr) *metaLeaf {
	f, ok := metaFields[e.field]
	l := &metaLeaf{field: f, op: e.op}
	if !ok {
		c.setType(apierr.New(apierr.InvalidFieldPath, "unknown meta filter field "+strconv.Quote(e.field),
			apierr.P("field", e.field)))
		l.never = true
		return l
	}
	fam := e.op.family()
	if fam == famPresence {
		return l
	}
	v := e.value
	if f.temporal() {
		if fam != famCompare && fam != famRange {
			l.never = true // text operators on meta dates never match (Q7)
			return l
		}
		bounds := []operand{v}
		if v.kind == oRange {
			bounds = []operand{*v.lo, *v.hi}
		}
		var ms [2]int64
		for i, b := range bounds {
			if b.kind == oNull || b.kind == oAbsent {
				l.never = true
				return l
			}
			sub, t, ok := classifyTemporal([]byte(b.text))
			if !ok || sub == TypeLocalTime {
				c.setType(apierr.New(apierr.ConditionTypeMismatch, "operand["+strconv.Itoa(i)+"] "+b.text+
					" parses into no temporal type for field "+strconv.Quote(e.field), apierr.P("field", e.field),
					apierr.P("operator", e.op.String()), apierr.P("operand", b.text)))
				l.never = true
				return l
			}
			ms[i] = t
		}
		l.msLo, l.msHi = ms[0], ms[len(bounds)-1]
		return l
	}
	if v.kind == oRange {
		if v.lo.kind == oNull || v.hi.kind == oNull {
			l.never = true
			return l
		}
		l.text, l.hi = v.lo.text, v.hi.text
		return l
	}
	if v.kind == oNull || v.kind == oAbsent {
		l.never = true
		return l
	}
	l.text = v.text
	switch e.op {
	case OpLike:
		l.like = c.likePattern(v.text, e.field)
	case OpMatchesPattern:
		l.re = c.regex(v.text, e.field)
		if l.re == nil {
			l.never = true
		}
	default:
		l.lower = strings.ToLower(v.text)
	}
	return l
}
