package sqlschema

// MergeTables is updateTables (docs/decisions/0024-sql-schema.md): the caller's tables of
// one model merged with the model's fresh tables. Tables match by
// uniformedPath and keep their name, hidden flag and field order; fields
// match by (category, key) and keep their name, hidden and flatten flags
// while taking the current data type and array positions (new positions
// inherit the field's hidden flag). Fresh fields are appended under names
// unique in the table, fresh tables are appended, and tables or fields the
// model no longer has are dropped. Every table gets the model's update
// time. Nothing is saved.
func MergeTables(existing, fresh []TableConfig, updatedMs int64) []TableConfig {
	var out []TableConfig
	used := uniqueNames{}
	for _, e := range existing {
		if findTable(fresh, e.UniformedPath) != nil && !e.Hidden {
			used[e.TableName] = true
		}
	}
	for _, e := range existing {
		f := findTable(fresh, e.UniformedPath)
		if f == nil {
			continue // the model no longer has this node
		}
		t := e
		t.Fields = mergeFields(e.Fields, f.Fields)
		t.MetadataClassID = f.MetadataClassID
		t.ModelUpdateDate = updatedMs
		out = append(out, t)
	}
	for _, f := range fresh {
		if findTable(existing, f.UniformedPath) != nil {
			continue
		}
		t := f
		t.TableName = used.take(f.TableName)
		t.ModelUpdateDate = updatedMs
		out = append(out, t)
	}
	return out
}

func fieldID(f *FieldConfig) string { return f.FieldCategory + "\x00" + f.FieldKey }

func mergeFields(existing, fresh []FieldConfig) []FieldConfig {
	byID := map[string]*FieldConfig{}
	for i := range fresh {
		byID[fieldID(&fresh[i])] = &fresh[i]
	}
	var out []FieldConfig
	have := map[string]bool{}
	for _, e := range existing {
		f := byID[fieldID(&e)]
		if f == nil {
			continue // the key vanished from the model
		}
		have[fieldID(&e)] = true
		m := e
		m.DataType, m.IsArray = f.DataType, f.IsArray
		if f.IsArray && m.Flatten == nil {
			m.Flatten = f.Flatten
		}
		if !f.IsArray {
			m.Flatten = nil
		}
		m.ArrayFields = mergePositions(e.ArrayFields, f.ArrayFields, e.Hidden)
		out = append(out, m)
	}
	names := fieldScope(out)
	for _, f := range fresh {
		if have[fieldID(&f)] {
			continue
		}
		n := f
		n.FieldName = names.take(f.FieldName)
		n.ArrayFields = nil
		for _, a := range f.ArrayFields {
			a.FieldName = names.take(a.FieldName)
			n.ArrayFields = append(n.ArrayFields, a)
		}
		out = append(out, n)
	}
	return out
}

// mergePositions keeps the caller's names and hidden flags of array
// positions that still exist and adds new positions.
func mergePositions(existing, fresh []FieldConfig, hidden bool) []FieldConfig {
	if len(fresh) == 0 {
		return nil
	}
	old := map[string]FieldConfig{}
	names := uniqueNames{}
	for _, e := range existing {
		old[fieldID(&e)] = e
		names[e.FieldName] = true
	}
	out := make([]FieldConfig, 0, len(fresh))
	for _, f := range fresh {
		if e, ok := old[fieldID(&f)]; ok {
			e.DataType = f.DataType
			out = append(out, e)
			continue
		}
		f.FieldName = names.take(f.FieldName)
		f.Hidden = hidden
		out = append(out, f)
	}
	return out
}
