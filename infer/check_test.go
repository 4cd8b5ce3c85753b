package infer

import (
	"slices"
	"strings"
	"testing"

	"svc/platform/apierr"
)

const checkBase = `{"name":"x","age":30,"price":1.5,"addr":{"zip":"1"},"tags":["a","b"],"items":[{"k":1}],"m":[[1,2]],"d":"2024-01-15","n":null}`

// checkCase: want is "fits", "widened" (then export must contain every
// entry of contains), or an error code with properties and a message part.
type checkCase struct {
	name     string
	doc      string
	level    ChangeLevel
	want     string
	contains []string
	props    map[string]any
	msg      string
}

func runCheckCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mustIngest(t, NewModel(), checkBase)
			before := export(m)
			w, err := m.Check([]byte(tc.doc), tc.level, Limits{})
			if export(m) != before {
				t.Fatalf("Check mutated the model: %s", export(m))
			}
			switch tc.want {
			case "fits":
				if err != nil || w != nil {
					t.Fatalf("want fits, got widened=%v err=%v", w != nil, err)
				}
			case "widened":
				if err != nil || w == nil {
					t.Fatalf("want widened, got widened=%v err=%v", w != nil, err)
				}
				got := export(w)
				for _, c := range tc.contains {
					if !strings.Contains(got, c) {
						t.Errorf("widened model lacks %s:\n%s", c, got)
					}
				}
				// The widened model admits the document strictly.
				if w2, err := w.Check([]byte(tc.doc), ChangeNone, Limits{}); err != nil || w2 != nil {
					t.Errorf("widened model rejects the document: %v", err)
				}
			default:
				if w != nil {
					t.Fatalf("widened model returned with an error")
				}
				e := apiErr(t, err)
				if e.Code.String() != tc.want {
					t.Fatalf("code %s (%s), want %s", e.Code, e.Message, tc.want)
				}
				if !strings.Contains(e.Message, tc.msg) {
					t.Errorf("message %q lacks %q", e.Message, tc.msg)
				}
				for k, v := range tc.props {
					got := prop(e, k)
					if sv, ok := v.([]string); ok {
						if gv, _ := got.([]string); !slices.Equal(gv, sv) {
							t.Errorf("prop %s = %v, want %v", k, got, v)
						}
						continue
					}
					if got != v {
						t.Errorf("prop %s = %v, want %v", k, got, v)
					}
				}
			}
		})
	}
}

func TestCheckStrict(t *testing.T) {
	inc := apierr.IncompatibleType.String()
	bad := apierr.BadRequest.String()
	runCheckCases(t, []checkCase{
		{name: "same shape", doc: `{"name":"y","age":31,"tags":["c"],"items":[{"k":2}],"m":[[3]]}`, want: "fits"},
		{name: "missing fields are fine", doc: `{}`, want: "fits"},
		{name: "integer in a DOUBLE field", doc: `{"price":13}`, want: "fits"},
		{name: "null leaf", doc: `{"age":null,"name":null}`, want: "fits"},
		{name: "null on an object field", doc: `{"addr":null,"items":null}`, want: "fits"},
		{name: "longer array is not checked", doc: `{"tags":["a","b","c","d"]}`, want: "fits"},
		{name: "decimal in INTEGER", doc: `{"age":13.111}`, want: inc,
			props: map[string]any{"fieldPath": "age", "expectedType": []string{"INTEGER"}, "actualType": "DOUBLE"},
			msg:   "age: value of type DOUBLE is not compatible with [INTEGER]"},
		{name: "LONG in INTEGER", doc: `{"age":2147483648}`, want: inc,
			props: map[string]any{"fieldPath": "age", "actualType": "LONG"}},
		{name: "date in STRING", doc: `{"name":"2024-01-15"}`, want: inc,
			props: map[string]any{"fieldPath": "name", "expectedType": []string{"STRING"}, "actualType": "LOCAL_DATE"}},
		{name: "date-time in LOCAL_DATE", doc: `{"d":"2024-01-15T10:00:00"}`, want: inc,
			props: map[string]any{"actualType": "LOCAL_DATE_TIME"}},
		{name: "element type", doc: `{"tags":["a",true]}`, want: inc,
			props: map[string]any{"fieldPath": "tags[]", "actualType": "BOOLEAN"}},
		{name: "field of an array element", doc: `{"items":[{"k":"x"}]}`, want: inc,
			props: map[string]any{"fieldPath": "items[].k", "expectedType": []string{"INTEGER"}, "actualType": "STRING"}},
		{name: "unknown field", doc: `{"zzz":1}`, want: bad,
			props: map[string]any{"fieldPath": "zzz"}, msg: "zzz: unexpected field not present in model"},
		{name: "scalar for an object", doc: `{"addr":"x"}`, want: bad, msg: "addr: expected object, got string"},
		{name: "object for a scalar", doc: `{"age":{"v":1}}`, want: bad, msg: "age: expected leaf, got object"},
		{name: "a mismatch wins over other errors", doc: `{"zzz":1,"age":"abc"}`, want: inc,
			props: map[string]any{"fieldPath": "age"}, msg: "age: value of type STRING is not compatible with [INTEGER]; zzz: unexpected field"},
		{name: "broken JSON", doc: `{"age":`, want: bad, msg: "invalid JSON document"},
	})
}

func TestCheckChangeLevels(t *testing.T) {
	bad := apierr.BadRequest.String()
	poly := apierr.PolymorphicSlot.String()
	runCheckCases(t, []checkCase{
		{name: "fits at every level", doc: `{"age":1,"tags":["z"]}`, level: ChangeArrayLength, want: "fits"},
		{name: "admitted value is no change", doc: `{"price":13}`, level: ChangeArrayLength, want: "fits"},
		{name: "null on object is no change", doc: `{"addr":null}`, level: ChangeArrayLength, want: "fits"},

		{name: "ARRAY_LENGTH: longer uni array", doc: `{"tags":["a","b","c"]}`, level: ChangeArrayLength,
			want: "widened", contains: []string{`".tags[*]":"(STRING x 3)"`}},
		{name: "ARRAY_LENGTH: longer inner array", doc: `{"m":[[1,2,3]]}`, level: ChangeArrayLength,
			want: "widened", contains: []string{`"$.m[*]":"(BYTE x 3)"`}},
		{name: "ARRAY_LENGTH: more inner arrays", doc: `{"m":[[1],[2],[3]]}`, level: ChangeArrayLength,
			want: "widened", contains: []string{`".m[*]":"(ARRAY_ELEMENT x 3)"`}},
		{name: "ARRAY_LENGTH: element type change", doc: `{"tags":["a",1]}`, level: ChangeArrayLength, want: bad,
			msg:   `change level violation: array element type change at .tags requires ARRAY_ELEMENTS level, but level is "ARRAY_LENGTH"`,
			props: map[string]any{"fieldPath": ".tags", "requiredLevel": "ARRAY_ELEMENTS", "changeLevel": "ARRAY_LENGTH"}},
		{name: "ARRAY_LENGTH: new index of another type", doc: `{"tags":["a","b",1]}`, level: ChangeArrayLength, want: bad,
			msg: "array element type change at .tags"},

		{name: "ARRAY_ELEMENTS: element type change", doc: `{"tags":["a",1]}`, level: ChangeArrayElements,
			want: "widened", contains: []string{`".tags[*]":["STRING","[INTEGER, STRING]"]`}},
		{name: "ARRAY_ELEMENTS: leaf type change", doc: `{"age":"abc"}`, level: ChangeArrayElements, want: bad,
			msg:   `change level violation: type change at .age requires TYPE level, but level is "ARRAY_ELEMENTS"`,
			props: map[string]any{"fieldPath": ".age", "requiredLevel": "TYPE"}},

		{name: "TYPE: polymorphic leaf", doc: `{"age":"abc"}`, level: ChangeType,
			want: "widened", contains: []string{`".age":"[INTEGER, STRING]"`}},
		{name: "TYPE: numeric widening", doc: `{"age":2147483648}`, level: ChangeType,
			want: "widened", contains: []string{`".age":"LONG"`}},
		{name: "TYPE: null-only field gets a type", doc: `{"n":"x"}`, level: ChangeType,
			want: "widened", contains: []string{`".n":"STRING"`}},
		{name: "ARRAY_ELEMENTS: null-only field gets a type", doc: `{"n":"x"}`, level: ChangeArrayElements, want: bad,
			msg: "type change at .n requires TYPE"},
		{name: "TYPE: new field", doc: `{"zzz":1}`, level: ChangeType, want: bad,
			msg:   `change level violation: new field "zzz" at $ requires STRUCTURAL level, but level is "TYPE"`,
			props: map[string]any{"requiredLevel": "STRUCTURAL"}},
		{name: "TYPE: new nested field", doc: `{"addr":{"city":"x"}}`, level: ChangeType, want: bad,
			msg: `new field "city" at .addr requires STRUCTURAL`},
		{name: "TYPE: new field in array elements", doc: `{"items":[{"k":1,"q":true}]}`, level: ChangeType, want: bad,
			msg: `new field "q" at .items[] requires STRUCTURAL`},
		{name: "TYPE: object on a null-only field with fields", doc: `{"n":{"a":1}}`, level: ChangeType, want: bad,
			msg: `new field "a" at .n requires STRUCTURAL`},

		{name: "STRUCTURAL: new fields", doc: `{"zzz":1,"addr":{"city":"x"},"items":[{"q":true}]}`, level: ChangeStructural,
			want: "widened", contains: []string{`".zzz":"INTEGER"`, `".addr.city":"STRING"`, `".q":"BOOLEAN"`}},
		{name: "STRUCTURAL: object on a null-only field", doc: `{"n":{"a":1}}`, level: ChangeStructural,
			want: "widened", contains: []string{`".n.a":"INTEGER"`}},

		{name: "scalar for an object", doc: `{"addr":"x"}`, level: ChangeStructural, want: poly,
			msg:   `polymorphic slot not yet supported at ".addr": existing OBJECT, incoming LEAF`,
			props: map[string]any{"fieldPath": ".addr", "existingKind": "OBJECT", "incomingKind": "LEAF"}},
		{name: "object for a scalar", doc: `{"age":{"x":1}}`, level: ChangeType, want: poly,
			props: map[string]any{"existingKind": "LEAF", "incomingKind": "OBJECT"}},
		{name: "object for an array", doc: `{"tags":{"x":1}}`, level: ChangeArrayLength, want: poly,
			props: map[string]any{"existingKind": "ARRAY", "incomingKind": "OBJECT"}},
		{name: "scalar element for object elements", doc: `{"items":["x"]}`, level: ChangeStructural, want: poly,
			props: map[string]any{"fieldPath": ".items[]", "existingKind": "OBJECT", "incomingKind": "LEAF"}},
		{name: "scalar element for array elements", doc: `{"m":[1]}`, level: ChangeStructural, want: poly,
			props: map[string]any{"fieldPath": ".m[]", "existingKind": "ARRAY", "incomingKind": "LEAF"}},
		{name: "object elements for primitive elements", doc: `{"tags":[{"a":1}]}`, level: ChangeStructural, want: poly,
			props: map[string]any{"fieldPath": ".tags[]", "existingKind": "LEAF", "incomingKind": "OBJECT"}},
		{name: "first violation in path order", doc: `{"zzz":1,"age":"abc"}`, level: ChangeArrayElements, want: bad,
			msg: "type change at .age"},
	})
}

func TestCheckRejectsUnknownLevel(t *testing.T) {
	m := mustIngest(t, NewModel(), `{"a":1}`)
	_, err := m.Check([]byte(`{"a":1}`), ChangeStructural+1, Limits{})
	if e := apiErr(t, err); e.Code != apierr.BadRequest {
		t.Fatal(e)
	}
}

func TestCheckAfterSimpleViewRoundTrip(t *testing.T) {
	// The model service stores SIMPLE_VIEW and checks against the parsed
	// model: what fits the ingested model fits the parsed one.
	m := mustIngest(t, NewModel(), checkBase)
	parsed, err := ParseSimpleView(m.AppendSimpleViewExport(nil, true), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []ChangeLevel{ChangeNone, ChangeArrayLength, ChangeStructural} {
		if w, err := parsed.Check([]byte(checkBase), l, Limits{}); err != nil || w != nil {
			t.Fatalf("level %q: %v %v", l, w != nil, err)
		}
	}
}
