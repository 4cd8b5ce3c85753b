package sqlschema

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"svc/infer"
)

func modelOf(t testing.TB, docs ...string) *infer.Model {
	t.Helper()
	m := infer.NewModel()
	for _, d := range docs {
		if err := m.Ingest([]byte(d), infer.DefaultLimits()); err != nil {
			t.Fatalf("ingest %s: %v", d, err)
		}
	}
	return m
}

// brief renders a table as "name path | field:key:CAT:TYPE …" with array
// sub-fields in brackets, the shape the golden expectations are written in.
func brief(t TableConfig) string {
	var b strings.Builder
	b.WriteString(t.TableName + " " + t.UniformedPath + " |")
	for _, f := range t.Fields {
		b.WriteString(" " + f.FieldName + ":" + f.FieldKey + ":" + f.FieldCategory + ":" + f.DataType)
		if f.IsArray {
			b.WriteString("[")
			if f.Flatten != nil && *f.Flatten {
				b.WriteString("flat")
			}
			for _, a := range f.ArrayFields {
				b.WriteString(" " + a.FieldName + ":" + a.FieldKey + ":" + a.DataType)
			}
			b.WriteString("]")
		}
	}
	return b.String()
}

func briefs(ts []TableConfig) []string {
	var out []string
	for _, t := range ts {
		out = append(out, brief(t))
	}
	return out
}

const meta = "entity_id:ENTITY_ID:SPECIAL:UUID_TYPE point_time:POINT_TIME:SPECIAL:DATE creation_date:creationDate:ROOT:DATE last_update_date:lastUpdateTime:ROOT:DATE state:state:ROOT:STRING"

func checkGolden(t *testing.T, got []TableConfig, want []string) {
	t.Helper()
	g := briefs(got)
	if len(g) != len(want) {
		t.Fatalf("got %d tables, want %d:\n%s", len(g), len(want), strings.Join(g, "\n"))
	}
	for i := range want {
		if w := strings.ReplaceAll(want[i], "META", meta); g[i] != w {
			t.Errorf("table %d:\n got %s\nwant %s", i, g[i], w)
		}
	}
}

var ref = ModelRef{ID: "1dba8c8a-77bb-11f0-822a-ae468cd3ed16", Name: "nobel-prize", Version: 1, UpdatedMs: 1700000000000}

func TestGenTablesNobel(t *testing.T) {
	m := modelOf(t, `{"category":"chemistry","year":"2020","laureates":[{"firstname":"Emmanuelle","id":"991","motivation":"...","share":"2","surname":"Charpentier"}]}`)
	got := GenTables(ref, m)
	checkGolden(t, got, []string{
		"nobel_prize $ | META category:.category:DATA:STRING year:.year:DATA:STRING",
		"nobel_prize_laureates $.laureates[*] | META index::INDEX:INTEGER[flat index_0:0:INTEGER] firstname:.firstname:DATA:STRING id:.id:DATA:STRING motivation:.motivation:DATA:STRING share:.share:DATA:STRING surname:.surname:DATA:STRING",
		"nobel_prize_json json | META entity:JSON:SPECIAL:STRING",
	})
	// The Cloud example's field set, order aside (docs/decisions/0024-sql-schema.md).
	var names []string
	for _, f := range got[1].Fields {
		names = append(names, f.FieldName)
	}
	sort.Strings(names)
	if w := "creation_date entity_id firstname id index last_update_date motivation point_time share state surname"; strings.Join(names, " ") != w {
		t.Errorf("laureates fields %v", names)
	}
	for _, tb := range got {
		if tb.MetadataClassID != ref.ID || tb.ModelUpdateDate != ref.UpdatedMs || tb.Hidden {
			t.Errorf("table %s: %+v", tb.TableName, tb)
		}
	}
}

func TestGenTablesWorkedExample(t *testing.T) {
	m := modelOf(t, `{"orderId":"A-1","customer":{"name":"Ann","tier":2},"tags":["new","vip"],"lines":[{"sku":"X1","qty":2,"price":9.5,"discounts":[{"code":"D10","pct":10}]},{"sku":"Y2","qty":1,"price":20}],"grid":[[1,2],[3,4]]}`)
	got := GenTables(ModelRef{ID: "x", Name: "orders", Version: 1}, m)
	checkGolden(t, got, []string{
		"orders $ | META customer_name:.customer.name:DATA:STRING customer_tier:.customer.tier:DATA:INTEGER orderid:.orderId:DATA:STRING tags_array:.tags[*]:DATA:STRING[ tags_0:.tags[0]:STRING tags_1:.tags[1]:STRING]",
		"orders_grid_array $.grid[*]^ | META index::INDEX:INTEGER[flat index_0:0:INTEGER] element:[*]:DATA:BYTE[flat element_0:[0]:BYTE element_1:[1]:BYTE]",
		"orders_lines $.lines[*] | META index::INDEX:INTEGER[flat index_0:0:INTEGER] price:.price:DATA:DOUBLE qty:.qty:DATA:INTEGER sku:.sku:DATA:STRING",
		"orders_lines_discounts $.lines[*].discounts[*] | META index::INDEX:INTEGER[flat index_0:0:INTEGER index_1:1:INTEGER] code:.code:DATA:STRING pct:.pct:DATA:INTEGER",
		"orders_json json | META entity:JSON:SPECIAL:STRING",
	})
}

// The docs' mixed-depth sample also lists …_data_array for the level-2
// primitives (2,3) and (4,5); the SIMPLE_VIEW a model is stored in prints
// that node as (ARRAY_ELEMENT x 4) and cannot carry them, so tables,
// which follow the export, have no such table (nor a level-1 column).
func TestGenTablesMixedDepthAnd3D(t *testing.T) {
	m := modelOf(t, `{"data":[1,[2,3],[4,5,[6,7],[8,9]]]}`)
	checkGolden(t, GenTables(ModelRef{ID: "x", Name: "mixed", Version: 1}, m), []string{
		// byte order: '[' sorts before '^'
		"mixed $ | META",
		"mixed_data_2d_array $.data[*][*]^ | META index::INDEX:INTEGER[flat index_0:0:INTEGER index_1:1:INTEGER] element:[*]:DATA:BYTE[flat element_0:[0]:BYTE element_1:[1]:BYTE]",
		"mixed_json json | META entity:JSON:SPECIAL:STRING",
	})
	m = modelOf(t, `{"cube":[[[1,2],[3,4]],[[5,6],[7,8]]]}`)
	checkGolden(t, GenTables(ModelRef{ID: "x", Name: "cubes", Version: 2}, m), []string{
		"cubes_2 $ | META",
		"cubes_2_cube_2d_array $.cube[*][*]^ | META index::INDEX:INTEGER[flat index_0:0:INTEGER index_1:1:INTEGER] element:[*]:DATA:BYTE[flat element_0:[0]:BYTE element_1:[1]:BYTE]",
		"cubes_2_json json | META entity:JSON:SPECIAL:STRING",
	})
}

func TestGenTablesVectors(t *testing.T) {
	raw, err := os.ReadFile("../testdata/simple-view-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.ReplaceAll(raw, []byte(": Infinity"), []byte(": null"))
	var vs []struct {
		Name     string   `json:"name"`
		DocsText []string `json:"docsText"`
	}
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range vs {
		m := infer.NewModel()
		for _, d := range v.DocsText {
			if err := m.Ingest([]byte(d), infer.DefaultLimits()); err != nil {
				t.Fatalf("%s: ingest: %v", v.Name, err)
			}
		}
		ts := GenTables(ModelRef{ID: "x", Name: v.Name, Version: 1}, m)
		if err := checkGenerated(ts, m); err != nil {
			t.Errorf("%s: %v\n%s", v.Name, err, strings.Join(briefs(ts), "\n"))
		}
	}
}
