package sqlschema

import (
	"fmt"

	"svc/infer"
)

// checkTables validates tables for saving (docs/decisions/0024-sql-schema.md): legal names,
// unique among visible tables and among a table's visible fields, known
// data types, and every uniformedPath and field key one the model's
// current tables have (fresh, by model id). The error text names the
// offending table and field.
func checkTables(ts []TableConfig, fresh map[string][]TableConfig) error {
	tableNames := map[string]bool{}
	for i := range ts {
		t := &ts[i]
		if !validName.MatchString(t.TableName) {
			return fmt.Errorf("table name %q must match %s", t.TableName, validName)
		}
		if !t.Hidden {
			if tableNames[t.TableName] {
				return fmt.Errorf("table name %q is used by more than one visible table", t.TableName)
			}
			tableNames[t.TableName] = true
		}
		ft := findTable(fresh[t.MetadataClassID], t.UniformedPath)
		if ft == nil {
			return fmt.Errorf("table %q: uniformedPath %q is not a node of model %s", t.TableName, t.UniformedPath, t.MetadataClassID)
		}
		known := map[string]bool{}
		for _, f := range ft.Fields {
			known[f.FieldCategory+"\x00"+f.FieldKey] = true
			for _, a := range f.ArrayFields {
				known[a.FieldCategory+"\x00"+a.FieldKey] = true
			}
		}
		fieldNames := map[string]bool{}
		check := func(f *FieldConfig) error {
			if !validName.MatchString(f.FieldName) {
				return fmt.Errorf("table %q: field name %q must match %s", t.TableName, f.FieldName, validName)
			}
			if !knownDataType(f.DataType) {
				return fmt.Errorf("table %q: field %q: unknown dataType %q", t.TableName, f.FieldName, f.DataType)
			}
			if !known[f.FieldCategory+"\x00"+f.FieldKey] {
				return fmt.Errorf("table %q: field %q: %s key %q is not a field of %s", t.TableName, f.FieldName, f.FieldCategory, f.FieldKey, t.UniformedPath)
			}
			return nil
		}
		for j := range t.Fields {
			f := &t.Fields[j]
			if err := check(f); err != nil {
				return err
			}
			flat := f.IsArray && f.Flatten != nil && *f.Flatten
			cols := []*FieldConfig{f}
			if flat {
				cols = cols[:0]
				for k := range f.ArrayFields {
					a := &f.ArrayFields[k]
					if err := check(a); err != nil {
						return err
					}
					cols = append(cols, a)
				}
			}
			for _, c := range cols {
				if f.Hidden || c.Hidden {
					continue
				}
				if fieldNames[c.FieldName] {
					return fmt.Errorf("table %q: field name %q is used by more than one visible field", t.TableName, c.FieldName)
				}
				fieldNames[c.FieldName] = true
			}
		}
	}
	return nil
}

func findTable(ts []TableConfig, path string) *TableConfig {
	for i := range ts {
		if ts[i].UniformedPath == path {
			return &ts[i]
		}
	}
	return nil
}

// checkGenerated validates genTables output against itself: generated
// names are always legal and unique, so saving them never fails.
func checkGenerated(ts []TableConfig, _ *infer.Model) error {
	byModel := map[string][]TableConfig{}
	for _, t := range ts {
		byModel[t.MetadataClassID] = append(byModel[t.MetadataClassID], t)
	}
	return checkTables(ts, byModel)
}
