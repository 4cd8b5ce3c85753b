package entity

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// MergePatch applies an RFC 7396 merge patch to target: members of a patch
// object overwrite, objects merge recursively, null deletes, anything else
// (arrays, scalars, a non-object patch) replaces. Member order of target is
// kept and new members are appended; keys and values are copied as written
// (numbers keep their text). A key repeated in the patch or in a target
// object the patch touches counts once, with its last value, at the place
// of its last occurrence.
//
// The work is linear in len(target)+len(patch) whatever their width or
// depth: the target is indexed in one pass, the patch read in one pass and
// the result written in one pass. target must be JSON (it is a stored
// document); patch is checked here.
func MergePatch(target, patch []byte) ([]byte, error) {
	if !json.Valid(patch) {
		return nil, errMalformed
	}
	return mergePatch(target, patch, mergeOpts{})
}

var errMalformed = errors.New("malformed JSON")

// mergeOpts bound one merge.
type mergeOpts struct {
	// maxBytes caps the result (0: no cap); past it the merge stops with
	// the MaxBytes limit error.
	maxBytes int
	// stop, when set, is polled every stopEvery bytes of work; an error
	// from it ends the merge with that error (the client went away).
	stop func() error
	// work, when set, receives what the merge did.
	work *MergeWork
}

// stopEvery is how much work passes between two polls of mergeOpts.stop:
// a poll is a system call, 64 KB of merging is a few hundred microseconds.
const stopEvery = 64 << 10

// MergeWork counts the steps of one merge, so tests can tell linear work
// from quadratic without a clock.
type MergeWork struct {
	// Scanned is the bytes of target and patch read, Compared the key
	// comparisons and hash lookups, Written the bytes of the result.
	Scanned, Compared, Written int
	// Polls is how often the stop check ran.
	Polls int
}

// Total is every step the merge took.
func (w MergeWork) Total() int { return w.Scanned + w.Compared + w.Written }

// smallObject is the member count up to which objects are searched by a
// linear scan; wider ones get a hash index.
const smallObject = 8

// tmember is one member of a target object.
type tmember struct {
	key    []byte // the decoded name
	ks, ke int32  // the name as written, quotes included
	vs, ve int32  // the value as written
	obj    int32  // the value's index in merger.objs when it is an object, else -1
}

// tobject is a target object: members[first : first+n].
type tobject struct{ first, n int32 }

const (
	editDelete = iota // null: remove the member
	editRaw           // a scalar or array: replaces the member
	editObject        // an object: merges into the member (pobjs[obj])
	editDead          // overridden by a later member of the same name
)

// pedit is one member of a patch object.
type pedit struct {
	key    []byte
	ks, ke int32 // the name as written, in the patch
	vs, ve int32 // editRaw: the value in the patch
	obj    int32 // editObject: its index in merger.pobjs
	tm     int32 // the target member it changes, or -1 for a new member
	next   int32 // the next edit of the same patch object, or -1
	kind   uint8
}

// pobject is a patch object and the target object it applies to.
type pobject struct {
	target      int32 // index in merger.objs, or -1: no object to merge into
	first, last int32 // its edits, a list through pedit.next
	n           int32 // how many
	news        map[string]int32
}

type merger struct {
	t, p    []byte
	objs    []tobject
	members []tmember
	stack   []tmember // members of the target objects still open
	tmaps   map[int32]map[string]int32
	edits   []pedit
	pobjs   []pobject
	// owner[i] is the patch object whose edit ownEdit[i] changes target
	// member i; a patch object only applies its own edits, so a repeated
	// patch key leaves nothing behind from its earlier value.
	owner, ownEdit []int32
	out            []byte
	o              mergeOpts
	w              MergeWork
	nextPoll       int
}

// mergePatch is MergePatch on a patch the caller has checked.
func mergePatch(target, patch []byte, o mergeOpts) ([]byte, error) {
	patch = bytes.TrimSpace(patch)
	if len(patch) == 0 || patch[0] != '{' {
		return append([]byte(nil), patch...), nil
	}
	m := &merger{t: bytes.TrimSpace(target), p: patch, o: o, nextPoll: stopEvery}
	if o.work != nil {
		defer func() { *o.work = m.w }()
	}
	ti := int32(-1)
	// Every member has a ':' (strings may hold more): sizing the slices
	// once saves the copies of growing them.
	if len(m.t) > 0 && m.t[0] == '{' {
		m.members = make([]tmember, 0, bytes.Count(m.t, []byte{':'}))
		s := scanner{b: m.t}
		var err error
		if ti, err = m.targetObject(&s); err != nil {
			return nil, err
		}
		if err := m.scanned(&s); err != nil {
			return nil, err
		}
		m.owner = make([]int32, len(m.members))
		m.ownEdit = make([]int32, len(m.members))
		for i := range m.owner {
			m.owner[i] = -1
		}
	}
	m.edits = make([]pedit, 0, bytes.Count(m.p, []byte{':'}))
	s := scanner{b: m.p}
	root, err := m.patchObject(&s, ti)
	if err != nil {
		return nil, err
	}
	if err := m.scanned(&s); err != nil {
		return nil, err
	}
	m.out = make([]byte, 0, len(m.t)+len(m.p))
	if err := m.emit(root); err != nil {
		return nil, err
	}
	return m.out, nil
}

// scanned counts what s has read since the last call and polls the stop
// check when its turn has come.
func (m *merger) scanned(s *scanner) error {
	m.w.Scanned += s.i - s.counted
	s.counted = s.i
	return m.poll()
}

func (m *merger) poll() error {
	if m.o.stop == nil || m.w.Total() < m.nextPoll {
		return nil
	}
	m.nextPoll = m.w.Total() + stopEvery
	m.w.Polls++
	return m.o.stop()
}

// targetObject indexes the object at s (its '{'), and every object below
// it, and returns its index in objs.
func (m *merger) targetObject(s *scanner) (int32, error) {
	oi := int32(len(m.objs))
	m.objs = append(m.objs, tobject{})
	mark := len(m.stack)
	s.i++
	s.ws()
	if s.peek() == '}' {
		s.i++
		m.objs[oi] = tobject{first: int32(len(m.members))}
		return oi, nil
	}
	for {
		ks, ke, err := s.str()
		if err != nil {
			return 0, err
		}
		if err := s.colon(); err != nil {
			return 0, err
		}
		vs, obj := s.i, int32(-1)
		if s.peek() == '{' {
			if obj, err = m.targetObject(s); err != nil {
				return 0, err
			}
		} else if err := s.skip(); err != nil {
			return 0, err
		}
		m.stack = append(m.stack, tmember{key: keyOf(s.b[ks:ke]), ks: int32(ks), ke: int32(ke), vs: int32(vs), ve: int32(s.i), obj: obj})
		if err := m.scanned(s); err != nil {
			return 0, err
		}
		end, err := s.next()
		if err != nil {
			return 0, err
		}
		if end {
			break
		}
	}
	// The members of nested objects were moved out when they closed, so
	// this object's are the top of the stack.
	first := int32(len(m.members))
	m.members = append(m.members, m.stack[mark:]...)
	m.objs[oi] = tobject{first: first, n: int32(len(m.stack) - mark)}
	m.stack = m.stack[:mark]
	return oi, nil
}

// lookup finds the member named k in target object oi: the last one of
// that name, or -1.
func (m *merger) lookup(oi int32, k []byte) int32 {
	o := m.objs[oi]
	if o.n <= smallObject {
		found := int32(-1)
		for j := o.first; j < o.first+o.n; j++ {
			m.w.Compared++
			if bytes.Equal(m.members[j].key, k) {
				found = j
			}
		}
		return found
	}
	m.w.Compared++
	if j, ok := m.tindex(oi)[unsafeString(k)]; ok {
		return j
	}
	return -1
}

// tindex is the hash index of a wide target object, built on first use.
func (m *merger) tindex(oi int32) map[string]int32 {
	if idx, ok := m.tmaps[oi]; ok {
		return idx
	}
	if m.tmaps == nil {
		m.tmaps = map[int32]map[string]int32{}
	}
	o := m.objs[oi]
	idx := make(map[string]int32, o.n)
	for j := o.first; j < o.first+o.n; j++ {
		idx[unsafeString(m.members[j].key)] = j // a later duplicate wins
	}
	m.w.Compared += int(o.n)
	m.tmaps[oi] = idx
	return idx
}

// shadowed tells whether target member j of object oi has a later
// namesake, which replaces it.
func (m *merger) shadowed(oi, j int32) bool {
	o := m.objs[oi]
	if o.n <= smallObject {
		for l := j + 1; l < o.first+o.n; l++ {
			m.w.Compared++
			if bytes.Equal(m.members[l].key, m.members[j].key) {
				return true
			}
		}
		return false
	}
	m.w.Compared++
	return m.tindex(oi)[unsafeString(m.members[j].key)] != j
}

// patchObject reads the patch object at s (its '{') against target object
// ti (-1: none) and returns its index in pobjs.
func (m *merger) patchObject(s *scanner, ti int32) (int32, error) {
	pi := int32(len(m.pobjs))
	m.pobjs = append(m.pobjs, pobject{target: ti, first: -1, last: -1})
	s.i++
	s.ws()
	if s.peek() == '}' {
		s.i++
		return pi, nil
	}
	for {
		ks, ke, err := s.str()
		if err != nil {
			return 0, err
		}
		if err := s.colon(); err != nil {
			return 0, err
		}
		e := pedit{key: keyOf(s.b[ks:ke]), ks: int32(ks), ke: int32(ke), tm: -1, next: -1}
		if ti >= 0 {
			e.tm = m.lookup(ti, e.key)
		}
		switch {
		case s.peek() == '{':
			child := int32(-1)
			if e.tm >= 0 {
				child = m.members[e.tm].obj
			}
			e.kind = editObject
			if e.obj, err = m.patchObject(s, child); err != nil {
				return 0, err
			}
		case s.null():
			e.kind = editDelete
		default:
			e.kind, e.vs = editRaw, int32(s.i)
			if err := s.skip(); err != nil {
				return 0, err
			}
			e.ve = int32(s.i)
		}
		m.add(pi, e)
		if err := m.scanned(s); err != nil {
			return 0, err
		}
		end, err := s.next()
		if err != nil {
			return 0, err
		}
		if end {
			return pi, nil
		}
	}
}

// add appends e to patch object pi; a new member overrides an earlier
// new member of the same name, a change of a target member an earlier
// change of it.
func (m *merger) add(pi int32, e pedit) {
	ei := int32(len(m.edits))
	po := &m.pobjs[pi]
	if e.tm >= 0 {
		m.owner[e.tm], m.ownEdit[e.tm] = pi, ei
	} else if po.news != nil {
		m.w.Compared++
		k := unsafeString(e.key)
		if prev, ok := po.news[k]; ok {
			m.edits[prev].kind = editDead
		}
		po.news[k] = ei
	} else {
		for j := po.first; j >= 0; j = m.edits[j].next {
			if m.edits[j].tm < 0 {
				m.w.Compared++
				if bytes.Equal(m.edits[j].key, e.key) {
					m.edits[j].kind = editDead
				}
			}
		}
		if po.n >= smallObject {
			po.news = map[string]int32{}
			for j := po.first; j >= 0; j = m.edits[j].next {
				if m.edits[j].tm < 0 && m.edits[j].kind != editDead {
					po.news[unsafeString(m.edits[j].key)] = j
				}
			}
			po.news[unsafeString(e.key)] = ei
		}
	}
	m.edits = append(m.edits, e)
	if po.last >= 0 {
		m.edits[po.last].next = ei
	} else {
		po.first = ei
	}
	po.last = ei
	po.n++
}

// emit writes patch object pi applied to its target object.
func (m *merger) emit(pi int32) error {
	po := m.pobjs[pi]
	m.out = append(m.out, '{')
	n := 0
	if po.target >= 0 {
		o := m.objs[po.target]
		for j := o.first; j < o.first+o.n; j++ {
			tm := &m.members[j]
			if m.shadowed(po.target, j) {
				continue
			}
			var e *pedit
			if m.owner[j] == pi {
				if e = &m.edits[m.ownEdit[j]]; e.kind == editDelete {
					continue
				}
			}
			if n > 0 {
				m.out = append(m.out, ',')
			}
			n++
			m.out = append(append(m.out, m.t[tm.ks:tm.ke]...), ':')
			// Each byte is counted once, by whoever copied it: nested
			// objects count their own.
			copied := int(tm.ke - tm.ks)
			if e == nil {
				m.out = append(m.out, m.t[tm.vs:tm.ve]...)
				copied += int(tm.ve - tm.vs)
			} else if err := m.emitValue(e); err != nil {
				return err
			}
			if err := m.wrote(copied); err != nil {
				return err
			}
		}
	}
	for ei := po.first; ei >= 0; ei = m.edits[ei].next {
		e := &m.edits[ei]
		if e.tm >= 0 || e.kind == editDelete || e.kind == editDead {
			continue
		}
		if n > 0 {
			m.out = append(m.out, ',')
		}
		n++
		m.out = append(append(m.out, m.p[e.ks:e.ke]...), ':')
		if err := m.emitValue(e); err != nil {
			return err
		}
		if err := m.wrote(int(e.ke - e.ks)); err != nil {
			return err
		}
	}
	m.out = append(m.out, '}')
	return m.wrote(2)
}

func (m *merger) emitValue(e *pedit) error {
	if e.kind == editObject {
		return m.emit(e.obj)
	}
	m.out = append(m.out, m.p[e.vs:e.ve]...)
	m.w.Written += int(e.ve - e.vs)
	return nil
}

// wrote counts n bytes of result and enforces the size cap.
func (m *merger) wrote(n int) error {
	m.w.Written += n
	if m.o.maxBytes > 0 && len(m.out) > m.o.maxBytes {
		return limitExceeded("MaxBytes", m.o.maxBytes, "merged document size")
	}
	return m.poll()
}

// limitExceeded is the 400 of a document bound, in the inference engine's
// words, so a client sees the same limit names wherever a document enters.
func limitExceeded(name string, max int, what string) *apierr.Error {
	return apierr.New(apierr.BadRequest, fmt.Sprintf("%s exceeds the limit %s=%d", what, name, max),
		apierr.P("limit", name), apierr.P("max", max))
}

// keyOf decodes a quoted member name; names without escapes or odd bytes
// (nearly all) are the input itself.
func keyOf(raw []byte) []byte {
	k := raw[1 : len(raw)-1]
	if bytes.IndexByte(k, '\\') < 0 && utf8.Valid(k) {
		return k
	}
	// The standard decoder's reading (invalid UTF-8 and lone surrogates
	// become U+FFFD) is what every other reader of the document sees.
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return k
	}
	return []byte(s)
}

// unsafeString views b as a string for map keys: the bytes are the
// target's, the patch's or a decoded name's, none written while a merge
// runs, and the maps do not outlive it.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// deeperThan reports whether JSON text b nests arrays and objects more than
// max deep. It reads no further than the first container past the limit,
// so a hostile body costs at most what its first max levels cost.
func deeperThan(b []byte, max int) bool {
	d := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			j := stringEnd(b, i)
			if j < 0 {
				return false
			}
			i = j - 1
		case '{', '[':
			if d++; d > max {
				return true
			}
		case '}', ']':
			d--
		}
	}
	return false
}

// stringEnd is the offset just past the string starting at b[i] ('"'), or
// -1 when it does not end.
func stringEnd(b []byte, i int) int {
	for i++; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		// The quote ends the string unless an odd run of backslashes
		// precedes it.
		bs := 0
		for k := i + j - 1; k >= i && b[k] == '\\'; k-- {
			bs++
		}
		i += j + 1
		if bs%2 == 0 {
			return i
		}
	}
}

// scanner reads JSON text the merge has been given as valid; on anything
// else it stops with errMalformed rather than read past the input.
type scanner struct {
	b       []byte
	i       int
	counted int // how much of b merger.scanned has counted
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str reads a string and returns its span, quotes included.
func (s *scanner) str() (int, int, error) {
	if s.peek() != '"' {
		return 0, 0, errMalformed
	}
	start := s.i
	end := stringEnd(s.b, s.i)
	if end < 0 {
		return 0, 0, errMalformed
	}
	s.i = end
	return start, end, nil
}

// colon reads the ':' after a member name and the space around it.
func (s *scanner) colon() error {
	s.ws()
	if s.peek() != ':' {
		return errMalformed
	}
	s.i++
	s.ws()
	return nil
}

// next reads the ',' or '}' after a member; end is true at '}'.
func (s *scanner) next() (end bool, err error) {
	s.ws()
	switch s.peek() {
	case ',':
		s.i++
		s.ws()
		return false, nil
	case '}':
		s.i++
		return true, nil
	}
	return false, errMalformed
}

// null reads a null literal if one is next.
func (s *scanner) null() bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		return false
	}
	s.i += 4
	return true
}

// skip reads one value of any kind.
func (s *scanner) skip() error {
	switch s.peek() {
	case '"':
		_, _, err := s.str()
		return err
	case '{', '[':
		d := 0
		for i := s.i; i < len(s.b); i++ {
			switch s.b[i] {
			case '"':
				j := stringEnd(s.b, i)
				if j < 0 {
					return errMalformed
				}
				i = j - 1
			case '{', '[':
				d++
			case '}', ']':
				if d--; d == 0 {
					s.i = i + 1
					return nil
				}
			}
		}
		return errMalformed
	}
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if s.i == start {
				return errMalformed
			}
			return nil
		}
		s.i++
	}
	if s.i == start {
		return errMalformed
	}
	return nil
}
