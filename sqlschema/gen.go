package sqlschema

import (
	"strconv"
	"strings"

	"svc/infer"
)

// ModelRef identifies the model tables are generated from.
type ModelRef struct {
	ID      string // the model's id (metadataClassId)
	Name    string
	Version int
	// UpdatedMs is the model's last update in epoch milliseconds
	// (modelUpdateDate; docs/decisions/0024-sql-schema.md).
	UpdatedMs int64
}

// GenTables generates the table configurations of one model
// (docs/decisions/0024-sql-schema.md): a pure function of the model, sorted by uniformedPath, with legal
// table names unique within the result and legal field names unique within
// each table.
func GenTables(ref ModelRef, m *infer.Model) []TableConfig {
	base := ref.Name
	if ref.Version > 1 {
		base += "_" + strconv.Itoa(ref.Version)
	}
	var out []TableConfig
	for _, n := range m.Nodes() {
		if n.Path == "$" || n.Object {
			out = append(out, objectTable(ref, base, n))
		}
		// A detached table needs primitive elements the export can carry:
		// next to inner arrays they print as (ARRAY_ELEMENT x n) and are
		// gone once the model is stored, so tables follow the export.
		if d := n.Detached; d != nil && !d.Containers && primWidth(d) > 0 {
			out = append(out, detachedTable(ref, base, n))
		}
	}
	out = append(out, jsonTable(ref, base))
	sortTables(out)
	names := uniqueNames{}
	for i := range out {
		out[i].TableName = names.take(out[i].TableName)
	}
	return out
}

// depth counts the "[*]" levels of a node path.
func depth(path string) int { return strings.Count(path, "[*]") }

// tableName builds the default name (docs/decisions/0024-sql-schema.md): base, the node path
// without "$" and "[*]" with '.' as '_', "_<N>d" for a path of N ≥ 2
// array levels in a row, "_array" for a detached table.
func tableName(base, path string, detached bool) string {
	suffix := strings.TrimPrefix(path, "$")
	n := strings.Count(suffix, "][") + 1
	suffix = strings.ReplaceAll(suffix, "[*]", "")
	suffix = strings.ReplaceAll(suffix, ".", "_")
	suffix = strings.ReplaceAll(suffix, "#", "_")
	name := base + suffix
	if n > 1 {
		name += "_" + strconv.Itoa(n) + "d"
	}
	if detached {
		name += "_array"
	}
	return legalName(name)
}

// metaFields are the SPECIAL and ROOT columns every table starts with.
func metaFields() []FieldConfig {
	return []FieldConfig{
		{FieldName: "entity_id", FieldKey: KeyEntityID, FieldCategory: CatSpecial, DataType: "UUID_TYPE"},
		{FieldName: "point_time", FieldKey: KeyPointTime, FieldCategory: CatSpecial, DataType: "DATE"},
		{FieldName: "creation_date", FieldKey: KeyCreation, FieldCategory: CatRoot, DataType: "DATE"},
		{FieldName: "last_update_date", FieldKey: KeyLastUpdate, FieldCategory: CatRoot, DataType: "DATE"},
		{FieldName: "state", FieldKey: KeyState, FieldCategory: CatRoot, DataType: "STRING"},
	}
}

// indexField is the INDEX column of a table k array levels deep.
func indexField(k int) FieldConfig {
	f := FieldConfig{FieldName: "index", FieldKey: "", FieldCategory: CatIndex, DataType: "INTEGER",
		IsArray: true, Flatten: boolPtr(true)}
	for i := 0; i < k; i++ {
		f.ArrayFields = append(f.ArrayFields, FieldConfig{FieldName: "index_" + strconv.Itoa(i),
			FieldKey: strconv.Itoa(i), FieldCategory: CatIndex, DataType: "INTEGER"})
	}
	return f
}

func newTable(ref ModelRef, name, path string) TableConfig {
	t := TableConfig{TableName: name, MetadataClassID: ref.ID, UniformedPath: path,
		Fields: metaFields(), ModelUpdateDate: ref.UpdatedMs}
	if k := depth(path); k > 0 {
		t.Fields = append(t.Fields, indexField(k))
	}
	return t
}

func objectTable(ref ModelRef, base string, n infer.Node) TableConfig {
	t := newTable(ref, tableName(base, n.Path, false), n.Path)
	names := fieldScope(t.Fields)
	for _, f := range n.Fields {
		if f.Array == nil {
			t.Fields = append(t.Fields, FieldConfig{FieldName: names.take(dataName(f.Key)),
				FieldKey: f.Key, FieldCategory: CatData, DataType: commonType(f.Types)})
			continue
		}
		if f.OfArrays {
			// Arrays of arrays live in detached tables only. Primitives next
			// to the inner arrays ([1,[2,3]]) get no column either: the
			// stored SIMPLE_VIEW prints such a key as (ARRAY_ELEMENT x n)
			// and cannot carry them, and tables follow the export.
			continue
		}
		w := primWidth(f.Array)
		stem := dataName(strings.TrimSuffix(f.Key, "[*]"))
		t.Fields = append(t.Fields, arrayField(names, stem, stem+"_array", f.Key, f.Array, w))
	}
	return t
}

// arrayField is a primitive-array column: one ARRAY column, or with
// flatten one column per position (keys "<key>[i]" for "<key>[*]").
func arrayField(names uniqueNames, stem, name, key string, a *infer.ArrayInfo, w int) FieldConfig {
	elem := positionsType(a)
	f := FieldConfig{FieldName: names.take(name), FieldKey: key, FieldCategory: CatData, DataType: elem,
		IsArray: true, Flatten: boolPtr(multiType(a) || elem == "ZONED_DATE_TIME")}
	keyStem := strings.TrimSuffix(key, "[*]")
	for i := 0; i < w; i++ {
		f.ArrayFields = append(f.ArrayFields, FieldConfig{FieldName: names.take(stem + "_" + strconv.Itoa(i)),
			FieldKey: keyStem + "[" + strconv.Itoa(i) + "]", FieldCategory: CatData, DataType: commonType(a.Positions[i])})
	}
	return f
}

func detachedTable(ref ModelRef, base string, n infer.Node) TableConfig {
	path := n.Path + "^"
	t := newTable(ref, tableName(base, n.Path, true), path)
	names := fieldScope(t.Fields)
	f := arrayField(names, "element", "element", "[*]", n.Detached, primWidth(n.Detached))
	f.Flatten = boolPtr(true)
	t.Fields = append(t.Fields, f)
	return t
}

func jsonTable(ref ModelRef, base string) TableConfig {
	t := newTable(ref, legalName(base+"_json"), PathJSON)
	t.Fields = append(t.Fields, FieldConfig{FieldName: "entity", FieldKey: KeyJSON, FieldCategory: CatSpecial, DataType: "STRING"})
	return t
}

// fieldScope is a name scope holding a table's existing field names
// (arrayFields included).
func fieldScope(fs []FieldConfig) uniqueNames {
	u := uniqueNames{}
	for _, f := range fs {
		u[f.FieldName] = true
		for _, a := range f.ArrayFields {
			u[a.FieldName] = true
		}
	}
	return u
}

// dataName is a DATA column name from a node-relative key: no leading
// '.', '.' and '-' as '_', lowercase, reserved names prefixed with '_'.
func dataName(key string) string {
	n := legalName(strings.TrimPrefix(key, "."))
	if reserved[n] {
		n = "_" + n
	}
	return n
}

func sortTables(ts []TableConfig) {
	// insertion sort keeps this dependency-free and the lists are short
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].UniformedPath < ts[j-1].UniformedPath; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}
