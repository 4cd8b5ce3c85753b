package infer

import (
	"fmt"
	"slices"
	"strings"

	"svc/platform/apierr"
)

// Check validates doc against a LOCKED model m under level. widened == nil
// means doc fits m as is; otherwise widened is a new model (m untouched)
// that the caller must persist.
//
// ChangeNone is strict validation (docs/decisions/0012-model-lifecycle-and-validation.md): unknown fields,
// a container where the model has none, or a leaf value whose type is not
// assignable to the field's types are rejected; array lengths are not
// checked. Every error found is reported, sorted by path; a type mismatch
// makes the error INCOMPATIBLE_TYPE (properties of the first mismatch),
// anything else BAD_REQUEST.
//
// Any other level extends instead of validating: the document's own model is
// compared with m and each difference needs a level (new field STRUCTURAL;
// changed leaf types and nullable fields TYPE; changed element types of an
// array ARRAY_ELEMENTS; a longer array with the same element type
// ARRAY_LENGTH). The first difference above level, in path order, is a
// BAD_REQUEST change-level violation; a value of another kind than the slot
// has (object where the model has a scalar, …) is POLYMORPHIC_SLOT at every
// level. Unlike the compatible system, a value the model already admits (13 in a
// DOUBLE field) is no change at any level.
func (m *Model) Check(doc []byte, level ChangeLevel, lim Limits) (*Model, error) {
	if level > ChangeStructural {
		return nil, apierr.New(apierr.BadRequest, "invalid change level", apierr.P("changeLevel", int(level)))
	}
	if ok, err := m.fits(doc, lim); err != nil || ok {
		return nil, err
	}
	return m.compare(doc, level, lim)
}

// compare is Check's full path: the document's own model compared with m.
func (m *Model) compare(doc []byte, level ChangeLevel, lim Limits) (*Model, error) {
	d, changed, err := m.diff(doc, level, lim)
	if err != nil || !changed {
		return nil, err
	}
	w := m.Clone()
	w.Merge(d)
	if w.Equal(m) {
		return nil, nil // e.g. a nullable marker, which SIMPLE_VIEW cannot carry
	}
	return w, nil
}

// diff builds doc's own model d and compares it with m: an error (strict
// validation's, or a change above level), or whether d changes m at all.
func (m *Model) diff(doc []byte, level ChangeLevel, lim Limits) (d *Model, changed bool, err error) {
	d = NewModel()
	if err := d.Ingest(doc, lim); err != nil {
		return nil, false, err
	}
	c := checker{level: level}
	c.object(&m.root, &d.root, "")
	if level == ChangeNone {
		return nil, false, c.strictError()
	}
	if c.violation != nil {
		return nil, false, c.violation
	}
	return d, c.changed, nil
}

type checker struct {
	level     ChangeLevel
	violation error // first violation (extend mode)
	changed   bool  // an admitted change was found (extend mode)
	errs      []strictErr
}

type strictErr struct {
	path     string
	msg      string
	mismatch bool // a leaf type mismatch
	expected []string
	actual   string
}

// strictPath drops the leading '.' the change-level messages keep.
func strictPath(p string) string {
	if p == "" {
		return "$"
	}
	return strings.TrimPrefix(p, ".")
}

func levelPath(p string) string {
	if p == "" {
		return "$"
	}
	return p
}

func (c *checker) strict(path, msg string) {
	c.errs = append(c.errs, strictErr{path: strictPath(path), msg: strictPath(path) + ": " + msg})
}

func (c *checker) mismatch(path string, actual DataType, expected TypeSet) {
	names := expected.Names()
	c.errs = append(c.errs, strictErr{
		path:     strictPath(path),
		msg:      fmt.Sprintf("%s: value of type %s is not compatible with [%s]", strictPath(path), actual, strings.Join(names, " ")),
		mismatch: true, expected: names, actual: actual.String(),
	})
}

func (c *checker) strictError() error {
	if len(c.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(c.errs, func(a, b strictErr) int { return strings.Compare(a.path, b.path) })
	msgs := make([]string, len(c.errs))
	for i, e := range c.errs {
		msgs[i] = e.msg
	}
	all := strings.Join(msgs, "; ")
	for _, e := range c.errs {
		if e.mismatch {
			return apierr.New(apierr.IncompatibleType, "validation failed: "+all,
				apierr.P("fieldPath", e.path),
				apierr.P("expectedType", e.expected),
				apierr.P("actualType", e.actual))
		}
	}
	return apierr.New(apierr.BadRequest, "validation failed: "+all, apierr.P("fieldPath", c.errs[0].path))
}

// need records a difference requiring level req at path.
func (c *checker) need(req ChangeLevel, path, reason string) {
	if c.violation != nil {
		return
	}
	if req <= c.level {
		c.changed = true
		return
	}
	c.violation = apierr.New(apierr.BadRequest,
		fmt.Sprintf(`change level violation: %s requires %s level, but level is "%s"`, reason, req, c.level),
		apierr.P("fieldPath", levelPath(path)),
		apierr.P("requiredLevel", req.String()),
		apierr.P("changeLevel", c.level.String()))
}

func (c *checker) polymorphic(path, existing, incoming string) {
	if c.violation != nil {
		return
	}
	p := levelPath(path)
	c.violation = apierr.New(apierr.PolymorphicSlot,
		fmt.Sprintf(`polymorphic slot not yet supported at %q: existing %s, incoming %s — normalize the document to the model's shape`, p, existing, incoming),
		apierr.P("fieldPath", p),
		apierr.P("existingKind", existing),
		apierr.P("incomingKind", incoming))
}

func sortedFields(o *objectShape) []*slot {
	s := slices.Clone(o.order)
	slices.SortFunc(s, func(a, b *slot) int { return strings.Compare(a.name, b.name) })
	return s
}

func (c *checker) object(m, d *objectShape, path string) {
	for _, ds := range sortedFields(d) {
		p := path + "." + ds.name
		ms := m.get([]byte(ds.name))
		if ms == nil {
			if c.level == ChangeNone {
				c.strict(p, "unexpected field not present in model")
			} else {
				c.need(ChangeStructural, path, fmt.Sprintf("new field %q at %s", ds.name, levelPath(path)))
			}
			continue
		}
		c.slot(ms, ds, p)
	}
}

// kindOf names what the model holds at a slot, for messages.
func kindOf(scalar TypeSet, obj bool, arr bool) string {
	switch {
	case obj:
		return "OBJECT"
	case arr:
		return "ARRAY"
	case scalar != 0:
		return "LEAF"
	}
	return "NULL"
}

// gotKind names an incoming leaf for strict messages.
func gotKind(t TypeSet) string {
	switch {
	case t == nullBit:
		return "<nil>"
	case t&numericMask != 0:
		return "number"
	case t.Has(Boolean):
		return "boolean"
	}
	return "string"
}

func (c *checker) slot(ms, ds *slot, path string) {
	mLeaf := ms.scalar.withoutNull() != 0
	mNullOnly := ms.scalar == nullBit && ms.obj == nil && ms.arr == nil
	expected := strings.ToLower(kindOf(0, ms.obj != nil, ms.arr != nil))
	// A null is accepted on every slot the model knows: SIMPLE_VIEW cannot
	// record that an object or array field was also seen null, so a rule
	// needing that fact would reject forever what the model's own samples
	// held.
	if dt := ds.scalar.withoutNull(); dt != 0 {
		switch {
		case c.level == ChangeNone:
			if ms.scalar == 0 {
				c.strict(path, "expected "+expected+", got "+gotKind(dt))
				break
			}
			for _, t := range dt.Types() {
				if !AssignableTo(t, ms.scalar) {
					c.mismatch(path, t, ms.scalar)
				}
			}
		case mLeaf:
			if ms.scalar.Union(dt) != ms.scalar {
				c.need(ChangeType, path, "type change at "+path)
			}
		case mNullOnly:
			c.need(ChangeType, path, "type change at "+path)
		default:
			c.polymorphic(path, kindOf(ms.scalar, ms.obj != nil, ms.arr != nil), "LEAF")
		}
	}
	if ds.obj != nil {
		switch {
		case ms.obj != nil:
			c.object(ms.obj, ds.obj, path)
		case c.level == ChangeNone:
			c.strict(path, "expected "+strictExpected(ms)+", got object")
		case mNullOnly:
			c.need(ChangeType, path, "nullable marker at "+path)
			c.object(&objectShape{}, ds.obj, path) // its fields are new
		default:
			c.polymorphic(path, kindOf(ms.scalar, false, ms.arr != nil), "OBJECT")
		}
	}
	if ds.arr != nil {
		switch {
		case ms.arr != nil:
			c.array(ms.arr, ds.arr, path)
		case c.level == ChangeNone:
			c.strict(path, "expected "+strictExpected(ms)+", got array")
		case mNullOnly:
			c.need(ChangeType, path, "nullable marker at "+path)
			c.array(&arrayShape{}, ds.arr, path)
		default:
			c.polymorphic(path, kindOf(ms.scalar, ms.obj != nil, false), "ARRAY")
		}
	}
}

func strictExpected(ms *slot) string {
	switch {
	case ms.obj != nil:
		return "object"
	case ms.arr != nil:
		return "array"
	case ms.scalar == nullBit:
		return "null"
	}
	return "leaf"
}

// union of every position's types.
func (a *arrayShape) elementTypes() TypeSet {
	var u TypeSet
	for _, t := range a.pos {
		u = u.Union(t)
	}
	return u
}

func (c *checker) array(ma, da *arrayShape, path string) {
	ep := path + "[]"
	mTypes, dTypes := ma.elementTypes(), da.elementTypes()
	mPrim := mTypes.withoutNull() != 0
	dPrim := dTypes.withoutNull() != 0
	// Null elements of an array of containers are absorbed (not printed,
	// not a change), like null fields.
	switch {
	case c.level == ChangeNone:
		switch {
		case dPrim && !mPrim && ma.structured():
			c.strict(ep, "expected "+elemKind(ma)+", got "+gotKind(dTypes.withoutNull()))
		case dPrim:
			for _, t := range dTypes.withoutNull().Types() {
				if !AssignableTo(t, mTypes) {
					c.mismatch(ep, t, mTypes)
				}
			}
		}
	case dPrim && !mPrim && ma.structured():
		c.polymorphic(ep, elemKindUpper(ma), "LEAF")
	case !dPrim && (da.structured() || ma.structured()):
		// only containers (and nulls) arrived: element shapes below
	default:
		c.positions(ma, da, path)
	}
	if da.elemObj != nil {
		switch {
		case ma.elemObj != nil:
			c.object(ma.elemObj, da.elemObj, ep)
		case c.level == ChangeNone:
			c.strict(ep, "expected "+elemKindOr(ma, "leaf")+", got object")
		case mPrim || ma.elemArr != nil:
			c.polymorphic(ep, elemKindUpperOr(ma, "LEAF"), "OBJECT")
		default:
			c.need(ChangeArrayElements, path, "array element type change at "+path)
			c.object(&objectShape{}, da.elemObj, ep)
		}
	}
	if da.elemArr != nil {
		switch {
		case ma.elemArr != nil:
			c.array(ma.elemArr, da.elemArr, ep)
		case c.level == ChangeNone:
			c.strict(ep, "expected "+elemKindOr(ma, "leaf")+", got array")
		case mPrim || ma.elemObj != nil:
			c.polymorphic(ep, elemKindUpperOr(ma, "LEAF"), "ARRAY")
		default:
			c.need(ChangeArrayElements, path, "array element type change at "+path)
			c.array(&arrayShape{}, da.elemArr, ep)
		}
	}
	if c.level != ChangeNone && da.width > ma.width && !da.hasPrimitives() && da.elemArr != nil {
		// (ARRAY_ELEMENT x n) prints the outer length.
		c.need(ChangeArrayLength, path, "array width change at "+path)
	}
}

func elemKind(a *arrayShape) string {
	if a.elemObj != nil {
		return "object"
	}
	return "array"
}

func elemKindOr(a *arrayShape, leaf string) string {
	if a.structured() {
		return elemKind(a)
	}
	return leaf
}

func elemKindUpper(a *arrayShape) string { return strings.ToUpper(elemKind(a)) }

func elemKindUpperOr(a *arrayShape, leaf string) string {
	if a.structured() {
		return elemKindUpper(a)
	}
	return leaf
}

// positions compares the per-index types of two primitive arrays: a longer
// array whose new indexes keep a UniTypeArray's type is ARRAY_LENGTH; any
// other change of per-index types is ARRAY_ELEMENTS.
func (c *checker) positions(ma, da *arrayShape, path string) {
	if !da.hasPrimitives() {
		return
	}
	for i, t := range da.pos {
		if i >= ma.width {
			break
		}
		if ma.pos[i].Union(t) != ma.pos[i] {
			c.need(ChangeArrayElements, path, "array element type change at "+path)
			return
		}
	}
	if da.width <= ma.width {
		return
	}
	uni := ma.width > 0 && ma.hasPrimitives()
	for _, t := range ma.pos {
		if norm(t) != norm(ma.pos[0]) {
			uni = false
		}
	}
	if uni {
		for _, t := range da.pos[ma.width:] {
			if norm(ma.pos[0].Union(t)) != norm(ma.pos[0]) {
				uni = false
			}
		}
	}
	if uni {
		c.need(ChangeArrayLength, path, "array width change at "+path)
	} else {
		c.need(ChangeArrayElements, path, "array element type change at "+path)
	}
}
