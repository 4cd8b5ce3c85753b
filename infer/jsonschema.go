package infer

import (
	"slices"
	"strings"
)

// AppendJSONSchema appends the JSON_SCHEMA export of m (the value of the
// export's "model" member): a JSON Schema draft 2020-12 document describing
// the documents the model has seen. Objects are {"type":"object",
// "properties":…}, arrays {"type":"array","items":…}, leaves map the
// integer family to integer, decimals to number, text and temporal types to
// string (temporal with a format), BOOLEAN to boolean and NULL to null.
//
// Every alternative admits null: a TypeSet absorbs NULL once a concrete
// type is seen, and Check accepts null for every field the model knows, so
// the schema says the same.
//
// Where a slot has several types the compatible system writes oneOf; svc
// writes (docs/decisions/0011-simple-view-export-import.md)
// anyOf, because a date string also matches plain {"type":["string","null"]} and
// oneOf would then reject exactly the values the model saw.
func (m *Model) AppendJSONSchema(dst []byte) []byte {
	dst = append(dst, `{"$schema":"https://json-schema.org/draft/2020-12/schema",`...)
	dst = appendObjectSchemaBody(dst, &m.root, `"object"`)
	return append(dst, '}')
}

// AppendJSONSchemaExport appends the whole export body
// {"currentState":…,"model":<schema>}.
func (m *Model) AppendJSONSchemaExport(dst []byte, locked bool) []byte {
	dst = appendEnvelopeStart(dst, locked)
	dst = m.AppendJSONSchema(dst)
	return append(dst, '}')
}

func appendObjectSchemaBody(dst []byte, o *objectShape, typ string) []byte {
	dst = append(dst, `"type":`...)
	dst = append(dst, typ...)
	dst = append(dst, `,"properties":{`...)
	fields := slices.Clone(o.order)
	slices.SortFunc(fields, func(a, b *slot) int { return strings.Compare(a.name, b.name) })
	for i, s := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, []byte(s.name))
		dst = append(dst, ':')
		dst = appendAlternatives(dst, s.scalar, s.obj, s.arr)
	}
	return append(dst, '}')
}

// appendAlternatives writes the schema of a slot: one alternative per
// observed type and container shape, in anyOf when there are several.
func appendAlternatives(dst []byte, scalar TypeSet, obj *objectShape, arr *arrayShape) []byte {
	if scalar != nullBit {
		scalar = scalar.withoutNull() // null is admitted by every alternative
	}
	n := scalar.Len()
	if obj != nil {
		n++
	}
	if arr != nil {
		n++
	}
	if n == 0 {
		return append(dst, "{}"...)
	}
	if n > 1 {
		dst = append(dst, `{"anyOf":[`...)
	}
	first := true
	sep := func() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
	}
	for _, t := range scalar.Types() {
		sep()
		dst = append(dst, typeSchema(t)...)
	}
	if obj != nil {
		sep()
		dst = append(dst, '{')
		dst = appendObjectSchemaBody(dst, obj, `["object","null"]`)
		dst = append(dst, '}')
	}
	if arr != nil {
		sep()
		dst = append(dst, `{"type":["array","null"],"items":`...)
		dst = appendAlternatives(dst, arr.elementTypes().withoutNull(), arr.elemObj, arr.elemArr)
		dst = append(dst, '}')
	}
	if n > 1 {
		dst = append(dst, "]}"...)
	}
	return dst
}

func typeSchema(t DataType) string {
	switch {
	case t.IsInteger():
		return `{"type":["integer","null"]}`
	case t.IsNumeric():
		return `{"type":["number","null"]}`
	}
	switch t {
	case LocalDate:
		return `{"type":["string","null"],"format":"date"}`
	case LocalDateTime, ZonedDateTime:
		return `{"type":["string","null"],"format":"date-time"}`
	case LocalTime:
		return `{"type":["string","null"],"format":"time"}`
	case Year:
		return `{"type":["string","null"],"format":"year"}`
	case YearMonth:
		return `{"type":["string","null"],"format":"year-month"}`
	case UUIDType, TimeUUIDType:
		return `{"type":["string","null"],"format":"uuid"}`
	case ByteArray:
		return `{"type":["string","null"],"format":"byte"}`
	case Boolean:
		return `{"type":["boolean","null"]}`
	case Null:
		return `{"type":"null"}`
	}
	return `{"type":["string","null"]}`
}
