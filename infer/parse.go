package infer

import (
	"bytes"
	"fmt"
	"strconv"

	"svc/platform/apierr"
)

// ParseSimpleView reads a SIMPLE_VIEW export back into a model. It takes the
// whole export envelope {"currentState":…,"model":{…}} or the bare node map.
// Export → ParseSimpleView → export is byte-identical. Unknown type names,
// malformed descriptors and paths, and crossed limits are BAD_REQUEST.
func ParseSimpleView(b []byte, lim Limits) (*Model, error) {
	w := getWalker(lim)
	defer putWalker(w)
	if len(b) > w.lim.MaxBytes {
		return nil, limitError("MaxBytes", w.lim.MaxBytes, "document size")
	}
	if err := w.syntaxOnly(b); err != nil {
		return nil, err
	}
	p := svParser{w: w, t: &w.tok, m: NewModel()}
	p.t.reset(b, w.lim)
	p.t.trusted = true
	if err := p.top(); err != nil {
		return nil, err
	}
	return p.m, nil
}

// syntaxOnly checks JSON syntax and the token-level bounds.
func (w *walker) syntaxOnly(b []byte) error {
	t := &w.tok
	t.reset(b, w.lim)
	for {
		k, _, err := t.next()
		if err != nil {
			return docError(err)
		}
		if k == tokEOF {
			return nil
		}
	}
}

type svParser struct {
	w *walker
	t *tokenizer
	m *Model
	// keyDepth is what is left of MaxDepth for keys inside the current node:
	// a node's path and its keys nest together.
	keyDepth int
}

func segments(path []byte) int {
	return bytes.Count(path, dot) + bytes.Count(path, reservedArraySuffix)
}

func svError(format string, a ...any) error {
	return apierr.New(apierr.BadRequest, "invalid SIMPLE_VIEW: "+fmt.Sprintf(format, a...))
}

// text returns a string token's decoded contents (valid until the next
// token).
func (p *svParser) text(raw []byte) []byte {
	if p.t.escaped {
		p.w.strbuf = unescape(p.w.strbuf[:0], raw)
		return p.w.strbuf
	}
	return raw
}

func (p *svParser) top() error {
	k, _, _ := p.t.next()
	if k != tokObjectStart {
		return svError("expected an export object")
	}
	k, key, _ := p.t.next()
	if k == tokObjectEnd {
		return svError(`the node map must contain the root node "$"`)
	}
	if len(key) > 0 && key[0] == '$' {
		return p.nodes(k, key)
	}
	sawModel := false
	for k == tokKey {
		switch string(p.text(key)) {
		case "currentState":
			k, v, _ := p.t.next()
			if k != tokString || (string(v) != "LOCKED" && string(v) != "UNLOCKED") {
				return svError(`currentState must be "LOCKED" or "UNLOCKED"`)
			}
		case "model":
			if sawModel {
				return svError(`duplicate "model"`)
			}
			sawModel = true
			if k, _, _ := p.t.next(); k != tokObjectStart {
				return svError(`"model" must be an object`)
			}
			k, key, _ := p.t.next()
			if err := p.nodes(k, key); err != nil {
				return err
			}
		default:
			return svError("unexpected member %s in the export envelope", quoteForMessage(key))
		}
		k, key, _ = p.t.next()
	}
	if !sawModel {
		return svError(`missing "model"`)
	}
	return nil
}

// nodes reads the node map; k/key is its first token after '{'.
func (p *svParser) nodes(k tokenKind, key []byte) error {
	sawRoot := false
	for ; k == tokKey; k, key, _ = p.t.next() {
		path := p.text(key)
		if len(path) == 1 && path[0] == '$' {
			sawRoot = true
		}
		if err := p.node(path); err != nil {
			return err
		}
	}
	if !sawRoot {
		return svError(`the node map must contain the root node "$"`)
	}
	return nil
}

// cursor is a place in the model a node path leads to.
type cursor struct {
	obj  *objectShape // the root, or
	slot *slot        // a field, or
	arr  *arrayShape  // the elements of an array
}

func (c cursor) object() *objectShape {
	switch {
	case c.obj != nil:
		return c.obj
	case c.slot != nil:
		return c.slot.object()
	}
	if c.arr.elemObj == nil {
		c.arr.elemObj = &objectShape{}
	}
	return c.arr.elemObj
}

func (c cursor) array() *arrayShape {
	if c.slot != nil {
		return c.slot.array()
	}
	if c.arr.elemArr == nil {
		c.arr.elemArr = &arrayShape{}
	}
	return c.arr.elemArr
}

// walkPath follows a path made of .name and [*] segments from c. Names end
// at the next '.' or "[*]", the way the encoder joins them.
func walkPath(c cursor, path []byte, full []byte, maxDepth int) (cursor, error) {
	// Each segment is a level of the model the encoder will recurse into.
	if segments(path) > maxDepth {
		return c, limitError("MaxDepth", maxDepth, "SIMPLE_VIEW path or key nesting")
	}
	for len(path) > 0 {
		switch {
		case path[0] == '.':
			path = path[1:]
			end := len(path)
			if i := bytes.IndexByte(path, '.'); i >= 0 {
				end = i
			}
			if i := bytes.Index(path[:end], reservedArraySuffix); i >= 0 {
				end = i
			}
			c = cursor{slot: c.object().child(path[:end])}
			path = path[end:]
		case bytes.HasPrefix(path, reservedArraySuffix):
			if c.obj != nil {
				return c, svError("path %s: [*] cannot follow the root", quoteForMessage(full))
			}
			c = cursor{arr: c.array()}
			path = path[3:]
		default:
			return c, svError("malformed path %s", quoteForMessage(full))
		}
	}
	return c, nil
}

func (p *svParser) node(path []byte) error {
	if len(path) == 0 || path[0] != '$' {
		return svError("node path %s must start with $", quoteForMessage(path))
	}
	// path is a view of a reused buffer: keep a copy for messages.
	full := append([]byte(nil), path...)
	c, err := walkPath(cursor{obj: &p.m.root}, full[1:], full, p.w.lim.MaxDepth)
	if err != nil {
		return err
	}
	if c.slot != nil {
		return svError("node path %s must be $ or end in [*]", quoteForMessage(full))
	}
	p.keyDepth = p.w.lim.MaxDepth - segments(full)
	k, raw, _ := p.t.next()
	switch {
	case c.obj != nil:
		if k != tokObjectStart {
			return svError(`the root node "$" must be an object node`)
		}
		return p.objectNode(c.obj, false)
	case k == tokObjectStart:
		if c.arr.elemObj == nil {
			c.arr.elemObj = &objectShape{}
		}
		return p.objectNode(c.arr.elemObj, true)
	case k == tokString:
		return p.detached(c.arr, p.text(raw), full)
	case k == tokArrayStart:
		k, raw, _ = p.t.next()
		if k == tokObjectStart { // mixed node [object, array descriptor]
			if c.arr.elemObj == nil {
				c.arr.elemObj = &objectShape{}
			}
			if err := p.objectNode(c.arr.elemObj, true); err != nil {
				return err
			}
			k, raw, _ = p.t.next()
			var err error
			switch k {
			case tokString:
				err = p.detached(c.arr, p.text(raw), full)
			case tokArrayStart:
				err = p.multi(c.array(), full)
			default:
				err = svError("node %s: a mixed node's second item must be an array descriptor", quoteForMessage(full))
			}
			if err != nil {
				return err
			}
			if k, _, _ = p.t.next(); k != tokArrayEnd {
				return svError("node %s: a mixed node has exactly two items", quoteForMessage(full))
			}
			return nil
		}
		return p.multiFrom(c.array(), k, raw, full)
	}
	return svError("node %s: unexpected value", quoteForMessage(full))
}

// detached applies an array node's string descriptor to the arrays held as
// elements of a.
func (p *svParser) detached(a *arrayShape, desc []byte, path []byte) error {
	inner := cursor{arr: a}.array()
	return p.arrayDescriptor(inner, desc, path)
}

// arrayDescriptor applies "(T x N)" or "(ARRAY_ELEMENT x N)" to a.
func (p *svParser) arrayDescriptor(a *arrayShape, desc []byte, path []byte) error {
	if len(desc) < 2 || desc[0] != '(' || desc[len(desc)-1] != ')' {
		return svError("at %s: %s is not an array descriptor (T x N)", quoteForMessage(path), quoteForMessage(desc))
	}
	body := desc[1 : len(desc)-1]
	i := bytes.LastIndex(body, []byte(" x "))
	if i < 0 {
		return svError("at %s: %s is not an array descriptor (T x N)", quoteForMessage(path), quoteForMessage(desc))
	}
	width, err := p.width(body[i+3:], path)
	if err != nil {
		return err
	}
	if string(body[:i]) == "ARRAY_ELEMENT" {
		a.grow(width)
		return nil
	}
	t, err := parseTypeSet(body[:i])
	if err != nil {
		return svError("at %s: %v", quoteForMessage(path), err)
	}
	a.grow(width)
	for j := 0; j < width; j++ {
		a.pos[j] = a.pos[j].Union(t)
	}
	return nil
}

func (p *svParser) width(b []byte, path []byte) (int, error) {
	if len(b) > 9 && len(bytes.Trim(b, "0123456789")) == 0 {
		return 0, limitError("MaxArrayWidth", p.w.lim.MaxArrayWidth, "array width")
	}
	if len(b) == 0 || len(b) > 9 || (len(b) > 1 && b[0] == '0') {
		return 0, svError("at %s: bad array width %s", quoteForMessage(path), quoteForMessage(b))
	}
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 0 {
		return 0, svError("at %s: bad array width %s", quoteForMessage(path), quoteForMessage(b))
	}
	if n > p.w.lim.MaxArrayWidth {
		return 0, limitError("MaxArrayWidth", p.w.lim.MaxArrayWidth, "array width")
	}
	return n, nil
}

// multi reads a MultiTypeArray after its '['.
func (p *svParser) multi(a *arrayShape, path []byte) error {
	k, raw, _ := p.t.next()
	return p.multiFrom(a, k, raw, path)
}

func (p *svParser) multiFrom(a *arrayShape, k tokenKind, raw []byte, path []byte) error {
	var i int
	for ; k == tokString; k, raw, _ = p.t.next() {
		t, err := parseTypeSet(p.text(raw))
		if err != nil {
			return svError("at %s: %v", quoteForMessage(path), err)
		}
		if i >= p.w.lim.MaxArrayWidth {
			return limitError("MaxArrayWidth", p.w.lim.MaxArrayWidth, "array width")
		}
		a.grow(i + 1)
		a.pos[i] = a.pos[i].Union(t)
		i++
	}
	if k != tokArrayEnd {
		return svError("at %s: a MultiTypeArray holds only type strings", quoteForMessage(path))
	}
	if i == 0 {
		return svError("at %s: a MultiTypeArray needs at least one item", quoteForMessage(path))
	}
	return nil
}

// objectNode reads an object node's members after its '{'.
func (p *svParser) objectNode(o *objectShape, element bool) error {
	n := 0
	for {
		k, raw, _ := p.t.next()
		if k == tokObjectEnd {
			return nil
		}
		n++
		if n > p.w.lim.MaxFields {
			return limitError("MaxFields", p.w.lim.MaxFields, "number of keys in one node")
		}
		key := append([]byte(nil), p.text(raw)...)
		if len(key) == 0 {
			return svError("empty key in an object node")
		}
		switch key[0] {
		case '#':
			k, v, _ := p.t.next()
			if k != tokString {
				return svError("structural key %s needs a string value", quoteForMessage(key))
			}
			if err := p.structural(o, key, p.text(v), element); err != nil {
				return err
			}
		case '.':
			if err := p.dataKey(o, key); err != nil {
				return err
			}
		default:
			return svError("key %s must start with '.' or '#'", quoteForMessage(key))
		}
	}
}

func (p *svParser) structural(o *objectShape, key, val []byte, element bool) error {
	if len(key) == 1 {
		if string(val) != "ARRAY_ELEMENT" || !element {
			return svError(`"#" must be "ARRAY_ELEMENT" and appear only in array element nodes`)
		}
		return nil
	}
	if string(val) != "OBJECT" {
		return svError("structural key %s must be \"OBJECT\"", quoteForMessage(key))
	}
	c, err := walkPath(cursor{obj: o}, key[1:], key, p.keyDepth)
	if err != nil {
		return err
	}
	if c.slot == nil {
		return svError("structural key %s must name a field", quoteForMessage(key))
	}
	c.slot.array()
	return nil
}

func (p *svParser) dataKey(o *objectShape, key []byte) error {
	if i := bytes.Index(key, reservedArraySuffix); i >= 0 && i != len(key)-3 {
		return svError("data key %s: [*] may only end a data key", quoteForMessage(key))
	}
	c, err := walkPath(cursor{obj: o}, key, key, p.keyDepth)
	if err != nil {
		return err
	}
	k, raw, _ := p.t.next()
	if c.slot != nil { // a scalar field
		if k != tokString {
			return svError("field %s needs a type string", quoteForMessage(key))
		}
		t, err := parseTypeSet(p.text(raw))
		if err != nil {
			return svError("field %s: %v", quoteForMessage(key), err)
		}
		c.slot.scalar = c.slot.scalar.Union(t)
		return nil
	}
	// c.arr is the element cursor of the field's array; the descriptor
	// describes the array itself, i.e. the field's array facet.
	a := p.fieldArray(o, key)
	switch k {
	case tokString:
		return p.arrayDescriptor(a, p.text(raw), key)
	case tokArrayStart:
		return p.multi(a, key)
	}
	return svError("array field %s needs an array descriptor", quoteForMessage(key))
}

// fieldArray returns the array facet of the field a data key ending in [*]
// names.
func (p *svParser) fieldArray(o *objectShape, key []byte) *arrayShape {
	c, _ := walkPath(cursor{obj: o}, key[:len(key)-3], key, p.keyDepth)
	return c.slot.array()
}

// parseTypeSet reads NAME or [A, B, …].
func parseTypeSet(b []byte) (TypeSet, error) {
	if len(b) > 0 && b[0] == '[' {
		if len(b) < 3 || b[len(b)-1] != ']' {
			return 0, fmt.Errorf("malformed type set %s", quoteForMessage(b))
		}
		var s TypeSet
		for _, part := range bytes.Split(b[1:len(b)-1], []byte(", ")) {
			t, ok := ParseDataType(string(part))
			if !ok {
				return 0, fmt.Errorf("unknown type %s", quoteForMessage(part))
			}
			s |= 1 << t
		}
		return s.Normalize(), nil
	}
	t, ok := ParseDataType(string(b))
	if !ok {
		return 0, fmt.Errorf("unknown type %s", quoteForMessage(b))
	}
	return Of(t), nil
}
