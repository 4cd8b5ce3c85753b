package sqlschema

import "svc/storage"

// Views resolves a schema's visible tables into the views the engine
// builds: hidden tables and fields are left out, flattened arrays become
// one column per visible position, names become PostgreSQL identifiers.
// keys maps model ids to model keys; a table of an unknown model has no
// view.
func Views(tables []TableConfig, keys map[string]storage.ModelKey) []storage.SQLView {
	var out []storage.SQLView
	for _, t := range tables {
		key, ok := keys[t.MetadataClassID]
		if t.Hidden || !ok {
			continue
		}
		v := storage.SQLView{Name: PGIdent(t.TableName), Model: key, Path: t.UniformedPath}
		for _, f := range t.Fields {
			if f.Hidden {
				continue
			}
			if f.IsArray && f.Flatten != nil && *f.Flatten {
				for _, a := range f.ArrayFields {
					if !a.Hidden {
						v.Columns = append(v.Columns, storage.SQLColumn{Name: PGIdent(a.FieldName),
							Category: a.FieldCategory, Key: a.FieldKey, DataType: a.DataType})
					}
				}
				continue
			}
			v.Columns = append(v.Columns, storage.SQLColumn{Name: PGIdent(f.FieldName), Category: f.FieldCategory,
				Key: f.FieldKey, DataType: f.DataType, Array: f.IsArray})
		}
		out = append(out, v)
	}
	return out
}
