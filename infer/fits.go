package infer

import "bytes"

// fits reports whether ingesting doc would leave m exactly as it is, reading
// m only. A document that changes nothing fits at every change level and
// under strict validation (every value's type is then already a member of,
// or widens into, its slot's types), so Check answers the common case —
// an entity shaped like the model — without building a model of the
// document and without allocating. Anything else returns false and Check
// takes the full comparison.
func (m *Model) fits(doc []byte, lim Limits) (bool, error) {
	w := getWalker(lim)
	defer putWalker(w)
	if err := w.validate(doc); err != nil {
		return false, err
	}
	w.tok.data, w.tok.pos = doc, 0
	w.tapeAt = 0
	if w.peek() == '{' {
		return w.fitsObject(&m.root), nil
	}
	w.tok.pos++ // a root array of objects
	for w.peek() != ']' {
		if !w.fitsObject(&m.root) {
			return false, nil
		}
		if w.peek() == ',' {
			w.tok.pos++
		}
	}
	return true, nil
}

// lookupDotted finds the slot a dotted member name resolves to, or nil.
func (o *objectShape) lookupDotted(name []byte) *slot {
	for {
		i := bytes.IndexByte(name, '.')
		if i < 0 {
			return o.get(name)
		}
		s := o.get(name[:i])
		if s == nil || s.obj == nil {
			return nil
		}
		o, name = s.obj, name[i+1:]
	}
}

func (w *walker) fitsObject(o *objectShape) bool {
	w.tok.pos++
	hint := 0
	for {
		if w.peek() == '}' {
			w.tok.pos++
			return true
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
			} else if s = o.get(key); s != nil {
				hint = s.idx
			}
			hint++
		} else {
			s = o.lookupDotted(key)
		}
		if s == nil {
			return false
		}
		w.peek() // ':'
		w.tok.pos++
		if !w.fitsValue(s) {
			return false
		}
		if w.peek() == ',' {
			w.tok.pos++
		}
	}
}

func (w *walker) fitsValue(s *slot) bool {
	switch w.peek() {
	case '{':
		return s.obj != nil && w.fitsObject(s.obj)
	case '[':
		return s.arr != nil && w.fitsArray(s.arr)
	}
	return s.scalar.Add(fieldClass(w.scalarClass())) == s.scalar
}

func (w *walker) fitsArray(a *arrayShape) bool {
	w.tok.pos++
	base := len(w.elems)
	defer func() { w.elems = w.elems[:base] }()
	allInt := true
	for {
		switch w.peek() {
		case ']':
			w.tok.pos++
			return w.fitsClose(a, base, allInt)
		case ',':
			w.tok.pos++
		case '{':
			allInt = false
			w.elems = append(w.elems, noPrimitive)
			if a.elemObj == nil || !w.fitsObject(a.elemObj) {
				return false
			}
		case '[':
			allInt = false
			w.elems = append(w.elems, noPrimitive)
			if a.elemArr == nil || !w.fitsArray(a.elemArr) {
				return false
			}
		default:
			c := w.scalarClass()
			if !c.IsInteger() {
				allInt = false
			}
			w.elems = append(w.elems, c)
		}
	}
}

// fitsClose is closeArray without the writes.
func (w *walker) fitsClose(a *arrayShape, base int, allInt bool) bool {
	el := w.elems[base:]
	if len(el) > a.width {
		return false
	}
	if allInt && len(el) > 0 {
		c := Byte
		for _, e := range el {
			if e > c {
				c = e
			}
		}
		for i := range el {
			if a.pos[i].Add(c) != a.pos[i] {
				return false
			}
		}
		return true
	}
	for i, e := range el {
		if e != noPrimitive && a.pos[i].Add(fieldClass(e)) != a.pos[i] {
			return false
		}
	}
	return true
}
