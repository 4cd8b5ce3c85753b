package infer

import (
	"bytes"
	"sync"

	"svc/apierr"
)

// walker holds the reusable state of one document pass: the tokenizer with
// its container stack, the per-container counters of the validation pass,
// the element-class scratch of the inference pass and a key buffer for
// escaped member names. Walkers are pooled so a document that fits a known
// shape allocates nothing.
type walker struct {
	tok    tokenizer
	lim    Limits
	counts []int      // members/elements per open container (validation pass)
	elems  []DataType // classes of the open arrays' elements (inference pass)
	keybuf []byte
	strbuf []byte
}

var walkerPool = sync.Pool{New: func() any { return &walker{} }}

func getWalker(lim Limits) *walker {
	w := walkerPool.Get().(*walker)
	w.lim = lim.withDefaults()
	return w
}

func putWalker(w *walker) {
	w.tok.data = nil
	if cap(w.elems) > 1<<16 || cap(w.keybuf) > 1<<16 || cap(w.strbuf) > 1<<16 {
		return // do not keep a hostile document's buffers alive
	}
	walkerPool.Put(w)
}

// noPrimitive marks an array element that was an object or an array.
const noPrimitive DataType = 0xFF

// Ingest widens m with one JSON document: an object, or an array whose
// elements are objects, each merged as one sample. The document is checked
// against lim in full before m is touched, so on error m is unchanged.
func (m *Model) Ingest(doc []byte, lim Limits) error {
	w := getWalker(lim)
	defer putWalker(w)
	if err := w.validate(doc); err != nil {
		return err
	}
	w.walkRoot(doc, &m.root)
	return nil
}

// validate runs the tokenizer over the whole document, enforcing syntax, the
// root shape and every bound of w.lim.
func (w *walker) validate(doc []byte) error {
	if len(doc) > w.lim.MaxBytes {
		return limitError("MaxBytes", w.lim.MaxBytes, "document size")
	}
	t := &w.tok
	t.reset(doc, w.lim)
	counts := w.counts[:0]
	defer func() { w.counts = counts[:0] }()
	rootArray := false
	for {
		k, text, err := t.next()
		if err != nil {
			return docError(err)
		}
		switch k {
		case tokEOF:
			if len(counts) == 0 && t.pos == 0 {
				return apierr.New(CodeBadRequest, "empty document: expected a JSON object or an array of objects")
			}
			return nil
		case tokObjectEnd, tokArrayEnd:
			counts = counts[:len(counts)-1]
			continue
		case tokKey:
			counts[len(counts)-1]++
			if counts[len(counts)-1] > w.lim.MaxFields {
				return limitError("MaxFields", w.lim.MaxFields, "number of members in one object")
			}
			if bytes.Contains(text, reservedArraySuffix) {
				return apierr.New(CodeBadRequest,
					"field name "+quoteForMessage(text)+" contains the reserved sequence [*]",
					apierr.P("field", string(text)))
			}
			continue
		}
		// A value: objects and arrays were pushed already.
		d := t.depth()
		if k == tokObjectStart || k == tokArrayStart {
			d--
		}
		switch {
		case d == 0:
			if k != tokObjectStart && k != tokArrayStart {
				return apierr.New(CodeBadRequest, "document root must be a JSON object or an array of objects")
			}
			rootArray = k == tokArrayStart
		case d == 1 && rootArray:
			if k != tokObjectStart {
				return apierr.New(CodeBadRequest, "a root array must hold only objects (each is one sample)")
			}
		}
		if d > 0 && t.stack[d-1] == '[' {
			counts[d-1]++
			if counts[d-1] > w.lim.MaxArrayWidth {
				return limitError("MaxArrayWidth", w.lim.MaxArrayWidth, "array length")
			}
		}
		if k == tokObjectStart || k == tokArrayStart {
			counts = append(counts, 0)
		}
	}
}

var reservedArraySuffix = []byte("[*]")

func quoteForMessage(b []byte) string {
	if len(b) > 64 {
		b = append(b[:61:61], "..."...)
	}
	return `"` + string(b) + `"`
}

// docError turns a tokenizer failure into the API error.
func docError(err error) error {
	if isLimit(err) {
		return err
	}
	return badRequest("invalid JSON document", err)
}

// walkRoot is the inference pass over a document validate accepted.
func (w *walker) walkRoot(doc []byte, root *objectShape) {
	t := &w.tok
	t.reset(doc, w.lim)
	t.trusted = true
	k, _, _ := t.next()
	if k == tokObjectStart {
		w.walkObject(root)
		return
	}
	for {
		k, _, _ = t.next()
		if k != tokObjectStart {
			return
		}
		w.walkObject(root)
	}
}

func (w *walker) walkObject(o *objectShape) {
	t := &w.tok
	hint := 0
	for {
		k, key, _ := t.next()
		if k != tokKey {
			return // '}'
		}
		name := key
		if t.escaped {
			w.keybuf = unescape(w.keybuf[:0], key)
			name = w.keybuf
		}
		var s *slot
		if bytes.IndexByte(name, '.') < 0 {
			if hint < len(o.order) && o.order[hint].name == string(name) {
				s = o.order[hint]
			} else {
				s = o.child(name)
				hint = s.idx
			}
			hint++
		} else {
			s = o.dotted(name)
		}
		w.walkValue(s)
	}
}

// dotted resolves a member name holding dots to the nested slot SIMPLE_VIEW
// would print it as.
func (o *objectShape) dotted(name []byte) *slot {
	for {
		i := bytes.IndexByte(name, '.')
		if i < 0 {
			return o.child(name)
		}
		o = o.child(name[:i]).object()
		name = name[i+1:]
	}
}

func (w *walker) walkValue(s *slot) {
	k, text, _ := w.tok.next()
	switch k {
	case tokObjectStart:
		w.walkObject(s.object())
	case tokArrayStart:
		w.walkArray(s.array())
	default:
		s.scalar = s.scalar.Add(fieldClass(w.scalarClass(k, text)))
	}
}

// scalarClass classifies a primitive token; integers get their narrowest
// class, which callers floor where the context requires.
func (w *walker) scalarClass(k tokenKind, text []byte) DataType {
	switch k {
	case tokString:
		if w.tok.escaped {
			w.strbuf = unescape(w.strbuf[:0], text)
			return classifyString(w.strbuf)
		}
		return classifyString(text)
	case tokNumber:
		return classifyNumber(text)
	case tokTrue, tokFalse:
		return Boolean
	}
	return Null
}

func (w *walker) walkArray(a *arrayShape) {
	t := &w.tok
	base := len(w.elems)
	allInt := true
	for {
		k, text, _ := t.next()
		switch k {
		case tokArrayEnd:
			w.closeArray(a, base, allInt)
			return
		case tokObjectStart:
			allInt = false
			w.elems = append(w.elems, noPrimitive)
			if a.elemObj == nil {
				a.elemObj = &objectShape{}
			}
			w.walkObject(a.elemObj)
		case tokArrayStart:
			allInt = false
			w.elems = append(w.elems, noPrimitive)
			if a.elemArr == nil {
				a.elemArr = &arrayShape{}
			}
			w.walkArray(a.elemArr)
		default:
			c := w.scalarClass(k, text)
			if !c.IsInteger() {
				allInt = false
			}
			w.elems = append(w.elems, c)
		}
	}
}

// closeArray folds one array's element classes into its shape. An array of
// integers only takes the narrowest class holding every element (the
// integer ruling); elsewhere integers floor at INTEGER.
func (w *walker) closeArray(a *arrayShape, base int, allInt bool) {
	el := w.elems[base:]
	a.grow(len(el))
	if allInt && len(el) > 0 {
		c := Byte
		for _, e := range el {
			if e > c {
				c = e
			}
		}
		for i := range el {
			a.pos[i] = a.pos[i].Add(c)
		}
	} else {
		for i, e := range el {
			if e != noPrimitive {
				a.pos[i] = a.pos[i].Add(fieldClass(e))
			}
		}
	}
	w.elems = w.elems[:base]
}
