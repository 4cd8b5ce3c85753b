package infer

import (
	"bytes"
	"math/rand"
	"os"
	"strings"
	"svc/platform/apierr"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// propertySeeds returns fixed seeds (reproducible failures) plus one random
// seed per run, logged so a failure can be replayed.
func propertySeeds(t *testing.T, fixed int) []int64 {
	seeds := make([]int64, 0, fixed+1)
	for i := 0; i < fixed; i++ {
		seeds = append(seeds, int64(i)*7919+1)
	}
	r := time.Now().UnixNano()
	t.Logf("random seed %d", r)
	return append(seeds, r)
}

func genDocs(seed int64, n int) []string {
	g := newDocGen(seed)
	docs := make([]string, n)
	for i := range docs {
		docs[i] = g.doc()
	}
	return docs
}

func modelOf(t testing.TB, docs []string) *Model {
	t.Helper()
	return mustIngest(t, NewModel(), docs...)
}

func TestPropertyMergeLaws(t *testing.T) {
	for _, seed := range propertySeeds(t, 300) {
		docs := genDocs(seed, 6)
		r := rand.New(rand.NewSource(seed))

		base := modelOf(t, docs)
		// Commutativity: any order of ingestion gives the same model.
		perm := append([]string(nil), docs...)
		r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if got := modelOf(t, perm); !got.Equal(base) {
			t.Fatalf("seed %d: order matters\n%s\n%s\ndocs %q", seed, export(base), export(got), docs)
		}
		// Idempotence: every document again changes nothing.
		twice := modelOf(t, append(append([]string(nil), docs...), docs...))
		if !twice.Equal(base) {
			t.Fatalf("seed %d: re-ingestion changed the model\n%s\n%s", seed, export(base), export(twice))
		}
		self := base.Clone()
		self.Merge(base)
		if !self.Equal(base) {
			t.Fatalf("seed %d: m ∪ m != m", seed)
		}
		// Associativity and merge = sequential ingestion.
		a, b, c := modelOf(t, docs[:2]), modelOf(t, docs[2:4]), modelOf(t, docs[4:])
		left := a.Clone()
		left.Merge(b)
		left.Merge(c)
		bc := b.Clone()
		bc.Merge(c)
		right := a.Clone()
		right.Merge(bc)
		if !left.Equal(right) || !left.Equal(base) {
			t.Fatalf("seed %d: merge not associative or not equal to ingestion\n(ab)c %s\na(bc) %s\nseq   %s", seed, export(left), export(right), export(base))
		}
		ba := b.Clone()
		ba.Merge(a)
		ab := a.Clone()
		ab.Merge(b)
		if !ab.Equal(ba) {
			t.Fatalf("seed %d: merge not commutative", seed)
		}
	}
}

func compileSchema(t testing.TB, name string, doc []byte) *jsonschema.Schema {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("schema %s is not JSON: %v\n%s", name, err, doc)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, v); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("compile %s: %v\n%s", name, err, doc)
	}
	return s
}

func validateJSON(t testing.TB, s *jsonschema.Schema, doc []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	return s.Validate(v)
}

func simpleViewSchema(t testing.TB) *jsonschema.Schema {
	raw, err := os.ReadFile("testdata/simple-view.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return compileSchema(t, "simple-view.schema.json", raw)
}

func TestPropertyExportRoundTripAndSchema(t *testing.T) {
	sv := simpleViewSchema(t)
	for _, seed := range propertySeeds(t, 300) {
		docs := genDocs(seed, 4)
		m := modelOf(t, docs)
		for _, locked := range []bool{false, true} {
			out := m.AppendSimpleViewExport(nil, locked)
			if err := validateJSON(t, sv, out); err != nil {
				t.Fatalf("seed %d: export violates the SIMPLE_VIEW schema: %v\n%s", seed, err, out)
			}
			back, err := ParseSimpleView(out, Limits{})
			if err != nil {
				t.Fatalf("seed %d: import of own export: %v\n%s", seed, err, out)
			}
			if again := back.AppendSimpleViewExport(nil, locked); !bytes.Equal(again, out) {
				t.Fatalf("seed %d: export→import→export differs\n%s\n%s", seed, out, again)
			}
		}
		// The bare node map imports too.
		bare := m.AppendSimpleView(nil)
		back, err := ParseSimpleView(bare, Limits{})
		if err != nil || !back.Equal(m) {
			t.Fatalf("seed %d: bare node map round trip: %v", seed, err)
		}
	}
}

func TestPropertyJSONSchemaAdmitsItsDocuments(t *testing.T) {
	for _, seed := range propertySeeds(t, 150) {
		docs := genDocs(seed, 4)
		m := modelOf(t, docs)
		s := compileSchema(t, "model.json", m.AppendJSONSchema(nil))
		for _, d := range docs {
			if err := validateJSON(t, s, []byte(d)); err != nil {
				t.Fatalf("seed %d: document rejected by its own model's schema: %v\ndoc %s\nschema %s", seed, err, d, m.AppendJSONSchema(nil))
			}
		}
		env := m.AppendJSONSchemaExport(nil, true)
		if !bytes.HasPrefix(env, []byte(`{"currentState":"LOCKED","model":{"$schema":"https://json-schema.org/draft/2020-12/schema",`)) {
			t.Fatalf("envelope: %s", env)
		}
	}
}

func TestPropertyCheckAdmitsWhatTheModelSaw(t *testing.T) {
	levels := []ChangeLevel{ChangeNone, ChangeArrayLength, ChangeArrayElements, ChangeType, ChangeStructural}
	for _, seed := range propertySeeds(t, 200) {
		docs := genDocs(seed, 4)
		m := modelOf(t, docs)
		before := export(m)
		for _, d := range docs {
			for _, l := range levels {
				w, err := m.Check([]byte(d), l, Limits{})
				if err != nil || w != nil {
					t.Fatalf("seed %d level %q: a document the model saw: widened=%v err=%v\ndoc %s\nmodel %s", seed, l, w != nil, err, d, before)
				}
			}
		}
		// STRUCTURAL admits everything that is not a change of kind, and
		// the widened model then admits the document strictly
		// (monotonicity of the extension).
		extra := genDocs(seed+1, 2)
		for _, d := range extra {
			w, err := m.Check([]byte(d), ChangeStructural, Limits{})
			if err != nil {
				if e := apiErr(t, err); e.Code != apierr.PolymorphicSlot {
					t.Fatalf("seed %d: STRUCTURAL rejected with %v\ndoc %s\nmodel %s", seed, err, d, before)
				}
				continue
			}
			if w == nil {
				w = m
			}
			if w2, err := w.Check([]byte(d), ChangeNone, Limits{}); err != nil || w2 != nil {
				t.Fatalf("seed %d: widened model rejects the document: %v\ndoc %s\nwidened %s", seed, err, d, export(w))
			}
			for _, old := range docs {
				if _, err := w.Check([]byte(old), ChangeNone, Limits{}); err != nil {
					t.Fatalf("seed %d: widening lost a document: %v", seed, err)
				}
			}
		}
		if export(m) != before {
			t.Fatalf("seed %d: Check mutated the model", seed)
		}
	}
}

func TestGeneratorCoversTheRules(t *testing.T) {
	// A generator that never produced mixed nodes or Multi arrays would make
	// the properties above vacuous.
	var all strings.Builder
	for seed := int64(1); seed < 200; seed++ {
		all.Write(modelOf(t, genDocs(seed, 4)).AppendSimpleView(nil))
	}
	s := all.String()
	for _, want := range []string{`ARRAY_ELEMENT x`, `"#":"ARRAY_ELEMENT"`, `:[{`, `":["`, `BYTE x`, `SHORT x`, `, STRING]`, `LOCAL_DATE`, `[*][*]`} {
		if !strings.Contains(s, want) {
			t.Errorf("generated models never contain %s", want)
		}
	}
}

// The SIMPLE_VIEW schema is not vacuous: it rejects what the format forbids
// (docs/decisions/0011-simple-view-export-import.md).
func TestSimpleViewSchemaRejects(t *testing.T) {
	sv := simpleViewSchema(t)
	for _, bad := range []string{
		`{"currentState":"OPEN","model":{"$":{}}}`,
		`{"currentState":"LOCKED","model":{"$":{}},"uniqueKeys":[]}`,
		`{"currentState":"LOCKED"}`,
		`{"currentState":"LOCKED","model":{}}`,
		`{"currentState":"LOCKED","model":{"$":{},"x":{}}}`,
		`{"currentState":"LOCKED","model":{"$":{".a":"FOO"}}}`,
		`{"currentState":"LOCKED","model":{"$":{".a":"[INTEGER,STRING]"}}}`,
		`{"currentState":"LOCKED","model":{"$":{}, "$.a[*]":[{}, "(BYTE x 1)", "(BYTE x 1)"]}}`,
		`{"currentState":"LOCKED","model":{"$":{}, "$.a[*]":[]}}`,
	} {
		if err := validateJSON(t, sv, []byte(bad)); err == nil {
			t.Errorf("schema accepts %s", bad)
		}
	}
}

// Check's no-allocation fast path (fits) never admits a document the full
// comparison would reject or widen for.
func TestPropertyFitsAgreesWithCompare(t *testing.T) {
	levels := []ChangeLevel{ChangeNone, ChangeArrayLength, ChangeArrayElements, ChangeType, ChangeStructural}
	fitted, refused := 0, 0
	for _, seed := range propertySeeds(t, 300) {
		m := modelOf(t, genDocs(seed, 5))
		for _, d := range genDocs(seed+1000, 6) {
			ok, err := m.fits([]byte(d), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				refused++
				continue
			}
			fitted++
			for _, l := range levels {
				if w, err := m.compare([]byte(d), l, Limits{}); err != nil || w != nil {
					t.Fatalf("seed %d level %q: fits, but compare says widened=%v err=%v\ndoc %s\nmodel %s", seed, l, w != nil, err, d, export(m))
				}
			}
		}
	}
	t.Logf("fitted %d, refused %d", fitted, refused)
	if fitted == 0 || refused == 0 {
		t.Fatalf("fitted %d, refused %d: the property is vacuous", fitted, refused)
	}
}
