package sqlschema

import (
	"strings"
	"testing"
)

func TestMergeTables(t *testing.T) {
	r := ModelRef{ID: "m1", Name: "orders", Version: 1, UpdatedMs: 1000}
	v1 := GenTables(r, modelOf(t, `{"id":"A","lines":[{"sku":"X","qty":2}],"tags":["a"]}`))
	// The caller's edits: a renamed table, a renamed and a hidden field, a
	// hidden table, and a table and a field the model will not have.
	mine := append([]TableConfig(nil), v1...)
	for i := range mine {
		mine[i].Fields = append([]FieldConfig(nil), mine[i].Fields...)
	}
	root := findTable(mine, "$")
	root.TableName = "my_orders"
	root.Fields = append(root.Fields, FieldConfig{FieldName: "old", FieldKey: ".vanished", FieldCategory: CatData, DataType: "STRING"})
	lines := findTable(mine, "$.lines[*]")
	for i := range lines.Fields {
		switch lines.Fields[i].FieldKey {
		case ".qty":
			lines.Fields[i].FieldName = "quantity"
		case ".sku":
			lines.Fields[i].Hidden = true
		}
	}
	// reorder: put sku first among the data fields is kept as given
	findTable(mine, PathJSON).Hidden = true
	mine = append(mine, TableConfig{TableName: "gone", MetadataClassID: "m1", UniformedPath: "$.gone[*]"})

	// The model widens: qty becomes DOUBLE, a new root field, tags grow, a
	// new array of objects.
	r.UpdatedMs = 2000
	v2 := GenTables(r, modelOf(t, `{"id":"A","lines":[{"sku":"X","qty":2}],"tags":["a"]}`,
		`{"id":"B","note":"n","lines":[{"sku":"Y","qty":2.5}],"tags":["a","b"],"refs":[{"k":1}]}`))
	got := MergeTables(mine, v2, 2000)

	var paths []string
	for _, tb := range got {
		paths = append(paths, tb.UniformedPath+"="+tb.TableName)
		if tb.ModelUpdateDate != 2000 {
			t.Errorf("%s: modelUpdateDate %d", tb.TableName, tb.ModelUpdateDate)
		}
	}
	if w := "$=my_orders $.lines[*]=orders_lines json=orders_json $.refs[*]=orders_refs"; strings.Join(paths, " ") != w {
		t.Fatalf("tables %v", paths)
	}
	if !findTable(got, PathJSON).Hidden {
		t.Error("hidden table lost its flag")
	}
	gr := findTable(got, "$")
	var fs []string
	for _, f := range gr.Fields {
		fs = append(fs, f.FieldName+":"+f.FieldKey)
	}
	if w := "entity_id:ENTITY_ID point_time:POINT_TIME creation_date:creationDate last_update_date:lastUpdateTime state:state id:.id tags_array:.tags[*] note:.note"; strings.Join(fs, " ") != w {
		t.Errorf("root fields %v", fs)
	}
	tags := gr.Fields[6]
	if len(tags.ArrayFields) != 2 || tags.ArrayFields[1].FieldName != "tags_1" {
		t.Errorf("tags positions %+v", tags.ArrayFields)
	}
	gl := findTable(got, "$.lines[*]")
	for _, f := range gl.Fields {
		switch f.FieldKey {
		case ".qty":
			if f.FieldName != "quantity" || f.DataType != "DOUBLE" {
				t.Errorf("qty %+v", f)
			}
		case ".sku":
			if !f.Hidden {
				t.Errorf("sku lost hidden %+v", f)
			}
		}
	}
	if err := checkTables(got, map[string][]TableConfig{"m1": v2}); err != nil {
		t.Errorf("merged tables do not validate: %v", err)
	}
}

func TestNamesLegalAndUnique(t *testing.T) {
	m := modelOf(t, `{"a":{"b":1},"a_b":2,"Index":3,"9lives":4,"x-y":5,"`+strings.Repeat("long", 40)+`":6}`)
	ts := GenTables(ModelRef{ID: "m", Name: "My Model!", Version: 3}, m)
	if ts[0].TableName != "my_model__3" {
		t.Errorf("table name %q", ts[0].TableName)
	}
	var fs []string
	for _, f := range ts[0].Fields[5:] {
		fs = append(fs, f.FieldName)
		if !validName.MatchString(f.FieldName) {
			t.Errorf("illegal %q", f.FieldName)
		}
	}
	got := strings.Join(fs, " ")
	for _, w := range []string{"_9lives", "_index", "a_b", "a_b_2", "x_y"} {
		if !strings.Contains(" "+got+" ", " "+w+" ") {
			t.Errorf("want %s in %s", w, got)
		}
	}
	if PGIdent(strings.Repeat("x", 100)) == PGIdent(strings.Repeat("x", 99)) || len(PGIdent(strings.Repeat("x", 100))) > 63 {
		t.Error("PGIdent must stay within 63 bytes and keep names apart")
	}
}
