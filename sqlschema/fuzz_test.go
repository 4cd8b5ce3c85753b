package sqlschema

import (
	"context"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/storage"
	"svc/storage/memory"
)

func fuzzService(t testing.TB) *Service {
	ms := memory.NewModels()
	m := modelOf(t, `{"category":"c","year":"2020","laureates":[{"firstname":"E","share":"2"}],"grid":[[1,2]]}`)
	err := ms.PutModel(context.Background(), &storage.Model{Tenant: "T", Key: storage.ModelKey{Name: "nobel", Version: 1},
		State: "LOCKED", Schema: m.AppendSimpleView(nil), UpdatedAt: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	st := memory.NewSQLSchemas()
	return New(st, ms, st, func(k storage.ModelKey) string { return "mid-" + k.Name }, time.Second)
}

// FuzzSave feeds arbitrary bodies to saveSchema and updateTables: every
// answer is a stored schema that validates again, or a catalogue error;
// never a panic or an internal error.
func FuzzSave(f *testing.F) {
	s := fuzzService(f)
	gen, err := s.GenTables(context.Background(), "T", "mid-nobel")
	if err != nil {
		f.Fatal(err)
	}
	tables, _ := json.Marshal(gen)
	f.Add([]byte(`{"schemaName":"s","tables":` + string(tables) + `}`))
	f.Add([]byte(`{"schemaName":"s","tables:":[]}`))
	f.Add([]byte(`{"schemaName":"","tables":[]}`))
	f.Add([]byte(`{"schemaName":"s","tables":[{"tableName":"x","metadataClassId":"mid-nobel","uniformedPath":"$.grid[*]^","fields":[{"fieldName":"e","fieldKey":"[7]","fieldCategory":"DATA","dataType":"INTEGER"}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ctx := context.Background()
		id, err := s.Save(ctx, "T", body)
		if err != nil {
			if _, ok := apierr.As(err); !ok {
				t.Fatalf("save: non-catalogue error %v", err)
			}
		} else {
			got, err := s.Get(ctx, "T", id)
			if err != nil {
				t.Fatalf("get after save: %v", err)
			}
			fresh := map[string][]TableConfig{"mid-nobel": gen}
			if err := checkTables(got.Tables, fresh); err != nil {
				t.Fatalf("stored tables do not validate: %v", err)
			}
		}
		var raw json.RawMessage
		if json.Unmarshal(body, &raw) == nil {
			if _, err := s.UpdateTables(ctx, "T", "mid-nobel", body); err != nil {
				if _, ok := apierr.As(err); !ok {
					t.Fatalf("updateTables: non-catalogue error %v", err)
				}
			}
		}
	})
}
