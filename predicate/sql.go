package predicate

import (
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// SQLColumns names what the rendered SQL reads. Doc is a jsonb column; the
// text columns must be NOT NULL (” when empty, as Meta has it) and the
// time columns timestamptz (NULL counts as absent). Names are trusted SQL
// (the storage engine's own); values never are: they travel as parameters.
type SQLColumns struct {
	Doc           string
	ID            string // text; cast a uuid column (e.g. "id::text")
	State         string
	Transition    string
	TransactionID string
	Created       string
	LastUpdated   string
}

// SQLBuilder collects a WHERE fragment and its parameters. Set Args to the
// parameters the surrounding statement already uses, so placeholders
// continue from len(Args)+1; after SQL, Args holds them all.
type SQLBuilder struct {
	Cols  SQLColumns
	Args  []any
	paths map[string]pathArg
	alias int
	// unsendable is set when an argument cannot reach PostgreSQL (a NUL
	// character or invalid UTF-8); the leaf then renders as a superset.
	unsendable bool
}

// SQL renders the condition as a boolean SQL expression that is never NULL
// and returns it with exact=true when it selects exactly the entities Match
// selects. When exact is false the fragment selects a superset and the
// caller re-checks each candidate row with Match (or Eval).
//
// What is inexact: case-insensitive operators (PostgreSQL's lower() is
// locale-dependent, Go's folding is Unicode's), MATCHES_PATTERN (RE2 is not
// PostgreSQL's regex dialect), temporal comparisons on data fields (the
// stored text has to be classified and parsed), numbers beyond
// PostgreSQL's numeric range, function criteria, and NOT over any of them.
// EQUALS on data paths adds `doc @> $n::jsonb` so that a GIN
// (doc jsonb_path_ops) index narrows the scan.
func (c *Condition) SQL(b *SQLBuilder) (frag string, exact bool, err error) {
	if b.Cols.Doc == "" {
		return "", false, errors.New("predicate: SQLColumns.Doc is required")
	}
	if b.paths == nil {
		b.paths = map[string]pathArg{}
	}
	return b.node(c.root)
}

func (b *SQLBuilder) arg(v any, cast string) string {
	switch x := v.(type) {
	case string:
		b.check(x)
		if cast == "jsonb" && strings.Contains(x, `\u0000`) {
			b.unsendable = true
		}
	case []string:
		for _, s := range x {
			b.check(s)
		}
	}
	b.Args = append(b.Args, v)
	return "$" + strconv.Itoa(len(b.Args)) + "::" + cast
}

type pathArg struct {
	ph  string
	idx int
}

// pathArg passes a path's keys once per statement, however often used.
func (b *SQLBuilder) pathArg(keys []string) string {
	k := strings.Join(keys, "\x00")
	if pa, ok := b.paths[k]; ok {
		return pa.ph
	}
	ph := b.arg(keys, "text[]")
	b.paths[k] = pathArg{ph, len(b.Args)}
	return ph
}

// check notes text PostgreSQL refuses; such text cannot be stored in a
// jsonb document or a text column either.
func (b *SQLBuilder) check(s string) {
	if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
		b.unsendable = true
	}
}

// leaf renders one leaf, falling back to an inexact "true" when an operand
// cannot be sent.
func (b *SQLBuilder) leaf(render func() (string, bool, error)) (string, bool, error) {
	mark := len(b.Args)
	b.unsendable = false
	s, ex, err := render()
	if err == nil && b.unsendable {
		b.unsendable = false
		b.truncate(mark)
		return "true", false, nil
	}
	return s, ex, err
}

// truncate drops the parameters of a fragment that is not used after all.
func (b *SQLBuilder) truncate(n int) {
	b.Args = b.Args[:n]
	for k, pa := range b.paths {
		if pa.idx > n {
			delete(b.paths, k)
		}
	}
}

func (b *SQLBuilder) node(n *node) (string, bool, error) {
	switch n.kind {
	case nAnd, nOr:
		if len(n.children) == 0 {
			return strconv.FormatBool(n.kind == nAnd), true, nil
		}
		sep := " AND "
		if n.kind == nOr {
			sep = " OR "
		}
		parts := make([]string, len(n.children))
		exact := true
		for i, ch := range n.children {
			s, ex, err := b.node(ch)
			if err != nil {
				return "", false, err
			}
			parts[i], exact = s, exact && ex
		}
		return "(" + strings.Join(parts, sep) + ")", exact, nil
	case nNot:
		mark := len(b.Args)
		s, ex, err := b.node(n.children[0])
		if err != nil {
			return "", false, err
		}
		if !ex {
			b.truncate(mark)
			return "true", false, nil
		}
		return "(NOT " + s + ")", true, nil
	case nFunc:
		return "true", false, nil
	case nMeta:
		return b.leaf(func() (string, bool, error) { return b.meta(n.meta) })
	}
	return b.leaf(func() (string, bool, error) { return b.data(n.data) })
}

// jsonAt renders the jsonb value at segs below base (no wildcards). A key
// that PostgreSQL could read as an array index, and an [n] subscript, are
// guarded by the parent's type so that #> means what the Go lookup means.
func (b *SQLBuilder) jsonAt(base string, segs []segment) string {
	if len(segs) == 0 {
		return base
	}
	keys := make([]string, len(segs))
	var guards []string
	for i, s := range segs {
		keys[i] = s.key
		want := ""
		if s.kind == segIndex {
			keys[i] = strconv.Itoa(s.index)
			want = "array"
		} else if strings.ContainsAny(s.key, "0123456789") {
			want = "object"
		}
		if want != "" {
			parent := base
			if i > 0 {
				parent = "(" + base + " #> " + b.pathArg(keys[:i]) + ")"
			}
			guards = append(guards, "jsonb_typeof("+parent+") = '"+want+"'")
		}
	}
	expr := "(" + base + " #> " + b.pathArg(keys) + ")"
	if len(guards) == 0 {
		return expr
	}
	return "(CASE WHEN " + strings.Join(guards, " AND ") + " THEN " + expr + " END)"
}

func splitSegs(segs []segment) [][]segment {
	out := [][]segment{{}}
	for _, s := range segs {
		if s.kind == segAll {
			out = append(out, []segment{})
			continue
		}
		out[len(out)-1] = append(out[len(out)-1], s)
	}
	return out
}

// walk renders "some value at the path satisfies pred", one EXISTS over
// jsonb_array_elements per [*] hop.
func (b *SQLBuilder) walk(base string, chunks [][]segment, pred func(x string) string) string {
	x := b.jsonAt(base, chunks[0])
	if len(chunks) == 1 {
		return pred(x)
	}
	b.alias++
	a := "e" + strconv.Itoa(b.alias)
	return "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(" + x + ") = 'array' THEN " + x +
		" END) AS " + a + "(v) WHERE " + b.walk(a+".v", chunks[1:], pred) + ")"
}

// pgNumericOK reports whether PostgreSQL's numeric can hold d (131072
// digits before the point, 16383 after).
func pgNumericOK(d *dec) bool {
	return d.zero() || (d.exp < 100_000 && d.exp-int64(d.ndigits()) > -16_000)
}

func (b *SQLBuilder) data(l *dataLeaf) (string, bool, error) {
	if l.never {
		return "false", true, nil
	}
	chunks := splitSegs(l.p.segs)
	base := b.Cols.Doc
	exact := true
	switch l.op.family() {
	case famPresence:
		s := b.walk(base, chunks, func(x string) string {
			return "coalesce(jsonb_typeof(" + x + ") <> 'null', false)"
		})
		if l.op == OpIsNull {
			s = "(NOT " + s + ")"
		}
		return s, true, nil
	case famCompare, famRange:
		var numSQL, strSQL, boolSQL string
		if l.num != nil {
			if !pgNumericOK(&l.num.lo) || !pgNumericOK(&l.num.hi) {
				exact = false
			} else {
				lo := b.arg(l.num.lo.text(), "jsonb")
				hi := lo
				if l.op.family() == famRange {
					hi = b.arg(l.num.hi.text(), "jsonb")
				}
				numSQL = cmpSQL(l.op, "%x", lo, hi)
			}
		}
		if l.str != nil || len(l.tmp) > 0 {
			var alts []string
			if len(l.tmp) > 0 {
				exact = false
				alts = append(alts, "true")
			} else if l.str.eqOnly && l.op.ordered() {
				alts = append(alts, "false")
			} else {
				lo := b.arg(l.str.lo, "text")
				hi := lo
				if l.op.family() == famRange {
					hi = b.arg(l.str.hi, "text")
				}
				alts = append(alts, cmpSQL(l.op, "(%x #>> '{}') COLLATE \"C\"", lo, hi))
			}
			strSQL = strings.Join(alts, " OR ")
		}
		if l.boolv != 0 {
			v := b.arg(strconv.FormatBool(l.boolv == 2), "jsonb")
			if l.op == OpEquals {
				boolSQL = "%x = " + v
			} else {
				boolSQL = "%x <> " + v
			}
		}
		if !exact && numSQL == "" && l.num != nil {
			numSQL = "true"
		}
		pred := func(x string) string {
			var sb strings.Builder
			sb.WriteString("(CASE jsonb_typeof(" + x + ")")
			for _, w := range [][2]string{{"number", numSQL}, {"string", strSQL}, {"boolean", boolSQL}} {
				if w[1] != "" {
					sb.WriteString(" WHEN '" + w[0] + "' THEN " + strings.ReplaceAll(w[1], "%x", x))
				}
			}
			sb.WriteString(" ELSE false END)")
			return sb.String()
		}
		s := b.walk(base, chunks, pred)
		if l.op == OpEquals && len(l.tmp) == 0 {
			if c := b.containment(l); c != "" {
				s = "(" + c + " AND " + s + ")"
			}
		}
		return s, exact, nil
	}
	tp, ex := b.textPred(l.op, l.text, l.like)
	s := b.walk(base, chunks, func(x string) string {
		return "(CASE WHEN jsonb_typeof(" + x + ") = 'string' THEN " + strings.ReplaceAll(tp, "%t", "("+x+" #>> '{}')") +
			" ELSE false END)"
	})
	return s, ex, nil
}

// cmpSQL renders op over expression pattern e (with %x standing for the
// value) against placeholders lo and hi.
func cmpSQL(op Op, e, lo, hi string) string {
	switch op {
	case OpEquals:
		return e + " = " + lo
	case OpNotEqual:
		return e + " <> " + lo
	case OpGreaterThan:
		return e + " > " + lo
	case OpGreaterOrEqual:
		return e + " >= " + lo
	case OpLessThan:
		return e + " < " + lo
	case OpLessOrEqual:
		return e + " <= " + lo
	case OpBetween:
		return "(" + e + " > " + lo + " AND " + e + " < " + hi + ")"
	case OpBetweenInclusive:
		return "(" + e + " >= " + lo + " AND " + e + " <= " + hi + ")"
	}
	return "false"
}

// textPred renders a text operator over %t.
func (b *SQLBuilder) textPred(op Op, text string, like []likeTok) (string, bool) {
	switch op {
	case OpContains, OpNotContains:
		cmp := " > 0"
		if op == OpNotContains {
			cmp = " = 0"
		}
		return "strpos(%t, " + b.arg(text, "text") + ")" + cmp, true
	case OpStartsWith:
		return "starts_with(%t, " + b.arg(text, "text") + ")", true
	case OpNotStartsWith:
		return "NOT starts_with(%t, " + b.arg(text, "text") + ")", true
	case OpEndsWith, OpNotEndsWith:
		a := b.arg(text, "text")
		cmp := " = "
		if op == OpNotEndsWith {
			cmp = " <> "
		}
		return "right(%t, length(" + a + "))" + cmp + a, true
	case OpLike:
		return "%t LIKE " + b.arg(likeSQL(like), "text"), true
	}
	return "true", false
}

// containment renders doc @> {...} alternatives implied by an EQUALS leaf:
// a necessary condition a GIN jsonb_path_ops index can answer. [*] and [n]
// become one-element arrays (array containment is existential).
func (b *SQLBuilder) containment(l *dataLeaf) string {
	var vals []string
	if l.num != nil {
		if !pgNumericOK(&l.num.lo) {
			return ""
		}
		vals = append(vals, l.num.lo.text())
	}
	if l.str != nil {
		q, _ := json.Marshal(l.str.lo)
		vals = append(vals, string(q))
	}
	if l.boolv != 0 {
		vals = append(vals, strconv.FormatBool(l.boolv == 2))
	}
	if len(vals) == 0 {
		return ""
	}
	var alts []string
	for _, v := range vals {
		doc := v
		for i := len(l.p.segs) - 1; i >= 0; i-- {
			s := l.p.segs[i]
			if s.kind == segKey {
				k, _ := json.Marshal(s.key)
				doc = "{" + string(k) + ":" + doc + "}"
			} else {
				doc = "[" + doc + "]"
			}
		}
		alts = append(alts, b.Cols.Doc+" @> "+b.arg(doc, "jsonb"))
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return "(" + strings.Join(alts, " OR ") + ")"
}

// pgTime clamps an instant into PostgreSQL's timestamptz range; every
// stored time lies inside it, so comparisons keep their answer.
func pgTime(ms int64) time.Time {
	const maxMS = 9_224_318_016_000_000 / 1000 // ~ year 294000
	if ms > maxMS {
		ms = maxMS
	}
	return time.UnixMilli(ms).UTC()
}

func (b *SQLBuilder) meta(l *metaLeaf) (string, bool, error) {
	col := ""
	switch l.field {
	case mState:
		col = b.Cols.State
	case mID:
		col = b.Cols.ID
	case mTransition:
		col = b.Cols.Transition
	case mTransactionID:
		col = b.Cols.TransactionID
	case mCreationDate:
		col = b.Cols.Created
	case mLastUpdateTime:
		col = b.Cols.LastUpdated
	}
	if l.never {
		return "false", true, nil
	}
	if col == "" {
		return "", false, errors.New("predicate: no SQL column for a meta field")
	}
	if l.field.temporal() {
		switch l.op {
		case OpIsNull:
			return col + " IS NULL", true, nil
		case OpNotNull:
			return col + " IS NOT NULL", true, nil
		}
		lo := func() string { return b.arg(pgTime(l.msLo), "timestamptz") }
		lo1 := func() string { return b.arg(pgTime(l.msLo+1), "timestamptz") }
		hi := func() string { return b.arg(pgTime(l.msHi), "timestamptz") }
		hi1 := func() string { return b.arg(pgTime(l.msHi+1), "timestamptz") }
		var s string
		switch l.op {
		case OpEquals:
			s = col + " >= " + lo() + " AND " + col + " < " + lo1()
		case OpNotEqual:
			s = "(" + col + " < " + lo() + " OR " + col + " >= " + lo1() + ")"
		case OpGreaterThan:
			s = col + " >= " + lo1()
		case OpGreaterOrEqual:
			s = col + " >= " + lo()
		case OpLessThan:
			s = col + " < " + lo()
		case OpLessOrEqual:
			s = col + " < " + lo1()
		case OpBetween:
			s = col + " >= " + lo1() + " AND " + col + " < " + hi()
		case OpBetweenInclusive:
			s = col + " >= " + lo() + " AND " + col + " < " + hi1()
		default:
			return "false", true, nil
		}
		return "(" + col + " IS NOT NULL AND " + s + ")", true, nil
	}
	switch l.op.family() {
	case famPresence:
		return strconv.FormatBool(l.op == OpNotNull), true, nil
	case famCompare, famRange:
		lo := b.arg(l.text, "text")
		hi := lo
		if l.op.family() == famRange {
			hi = b.arg(l.hi, "text")
		}
		e := col + ` COLLATE "C"`
		if l.op == OpEquals || l.op == OpNotEqual {
			e = col
		}
		return "(" + cmpSQL(l.op, e, lo, hi) + ")", true, nil
	}
	tp, ex := b.textPred(l.op, l.text, l.like)
	return "(" + strings.ReplaceAll(tp, "%t", col) + ")", ex, nil
}
