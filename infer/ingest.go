package infer

import (
	"bytes"
	"sync"

	"svc/platform/apierr"
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
	tape   []uint32 // string and number ends recorded by validate
	tapeAt int
}

var walkerPool = sync.Pool{New: func() any { return &walker{} }}

func getWalker(lim Limits) *walker {
	w := walkerPool.Get().(*walker)
	w.lim = lim.withDefaults()
	return w
}

func putWalker(w *walker) {
	w.tok.data = nil
	if cap(w.elems) > 1<<16 || cap(w.keybuf) > 1<<16 || cap(w.strbuf) > 1<<16 || cap(w.tape) > 1<<20 {
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
	w.tape = w.tape[:0]
	t.tape = &w.tape
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
				return apierr.New(apierr.BadRequest, "empty document: expected a JSON object or an array of objects")
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
			name := text
			if t.escaped {
				w.keybuf = unescape(w.keybuf[:0], text)
				name = w.keybuf
			}
			dots, bracket := 0, false
			for _, c := range name {
				switch c {
				case '.':
					dots++
				case '[':
					bracket = true
				}
			}
			if dots > 0 {
				if t.depth()+dots > w.lim.MaxDepth {
					// a dotted name nests like objects do
					return limitError("MaxDepth", w.lim.MaxDepth, "field nesting (each '.' in a member name is a level)")
				}
				w.tape[len(w.tape)-1] |= tapeDotted
			}
			if bracket && bytes.Contains(name, reservedArraySuffix) {
				return apierr.New(apierr.BadRequest,
					"field name "+quoteForMessage(name)+" contains the reserved sequence [*]",
					apierr.P("field", string(name)))
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
				return apierr.New(apierr.BadRequest, "document root must be a JSON object or an array of objects")
			}
			rootArray = k == tokArrayStart
		case d == 1 && rootArray:
			if k != tokObjectStart {
				return apierr.New(apierr.BadRequest, "a root array must hold only objects (each is one sample)")
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

var (
	reservedArraySuffix = []byte("[*]")
	dot                 = []byte(".")
)

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

// The inference pass runs over a document validate accepted, so it reads
// the bytes directly instead of through the tokenizer's state machine: no
// syntax checks, no UTF-8 checks, just the structure.

func (w *walker) ws() {
	d, p := w.tok.data, w.tok.pos
	for p < len(d) && d[p] <= ' ' { // only JSON whitespace can be here
		p++
	}
	w.tok.pos = p
}

// peek returns the next significant byte.
func (w *walker) peek() byte {
	w.ws()
	return w.tok.data[w.tok.pos]
}

// readString consumes the string at pos and returns its raw body and
// whether it holds escapes; its end comes from the validation pass's tape.
func (w *walker) readString() ([]byte, bool) {
	e := w.tape[w.tapeAt]
	w.tapeAt++
	end := int(e &^ (tapeEscaped | tapeDotted))
	raw := w.tok.data[w.tok.pos+1 : end]
	w.tok.pos = end + 1
	return raw, e&tapeEscaped != 0
}

// readKey is readString for a member name, also telling whether the
// (decoded) name holds a dot.
func (w *walker) readKey() (raw []byte, escaped, dotted bool) {
	dotted = w.tape[w.tapeAt]&tapeDotted != 0
	raw, escaped = w.readString()
	return raw, escaped, dotted
}

func (w *walker) readNumber() []byte {
	end := int(w.tape[w.tapeAt])
	w.tapeAt++
	raw := w.tok.data[w.tok.pos:end]
	w.tok.pos = end
	return raw
}

func (w *walker) walkRoot(doc []byte, root *objectShape) {
	w.tok.data, w.tok.pos = doc, 0
	w.tapeAt = 0
	if w.peek() == '{' {
		w.walkObject(root)
		return
	}
	w.tok.pos++ // '['
	for w.peek() != ']' {
		w.walkObject(root)
		if w.peek() == ',' {
			w.tok.pos++
		}
	}
}

// walkObject reads an object starting at its '{'.
func (w *walker) walkObject(o *objectShape) {
	w.tok.pos++
	hint := 0
	for {
		if w.peek() == '}' {
			w.tok.pos++
			return
		}
		key, escaped, dotted := w.readKey()
		if escaped {
			w.keybuf = unescape(w.keybuf[:0], key)
			key = w.keybuf
		}
		var s *slot
		if !dotted {
			if hint < len(o.order) && o.order[hint].name == string(key) {
				s = o.order[hint]
			} else {
				s = o.child(key)
				hint = s.idx
			}
			hint++
		} else {
			s = o.dotted(key)
		}
		w.peek() // ':'
		w.tok.pos++
		w.walkValue(s)
		if w.peek() == ',' {
			w.tok.pos++
		}
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
	switch w.peek() {
	case '{':
		w.walkObject(s.object())
	case '[':
		w.walkArray(s.array())
	default:
		s.scalar = s.scalar.Add(fieldClass(w.scalarClass()))
	}
}

// scalarClass reads a primitive at pos and classifies it; integers get
// their narrowest class, which callers floor where the context requires.
func (w *walker) scalarClass() DataType {
	d := w.tok.data
	switch d[w.tok.pos] {
	case '"':
		raw, escaped := w.readString()
		if escaped {
			w.strbuf = unescape(w.strbuf[:0], raw)
			return classifyString(w.strbuf)
		}
		return classifyString(raw)
	case 't':
		w.tok.pos += 4
		return Boolean
	case 'f':
		w.tok.pos += 5
		return Boolean
	case 'n':
		w.tok.pos += 4
		return Null
	}
	return classifyNumber(w.readNumber())
}

// walkArray reads an array starting at its '['.
func (w *walker) walkArray(a *arrayShape) {
	w.tok.pos++
	base := len(w.elems)
	allInt := true
	for {
		switch w.peek() {
		case ']':
			w.tok.pos++
			w.closeArray(a, base, allInt)
			return
		case ',':
			w.tok.pos++
			continue
		case '{':
			allInt = false
			w.elems = append(w.elems, noPrimitive)
			if a.elemObj == nil {
				a.elemObj = &objectShape{}
			}
			w.walkObject(a.elemObj)
		case '[':
			allInt = false
			w.elems = append(w.elems, noPrimitive)
			if a.elemArr == nil {
				a.elemArr = &arrayShape{}
			}
			w.walkArray(a.elemArr)
		default:
			c := w.scalarClass()
			if !c.IsInteger() {
				allInt = false
			}
			w.elems = append(w.elems, c)
		}
	}
}

// closeArray folds one array's element classes into its shape. An array of
// integers only takes the narrowest class holding every element (the
// integer rule of docs/decisions/0010-schema-inference.md); elsewhere integers floor at INTEGER.
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
