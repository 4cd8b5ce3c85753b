package fast

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"svc/entity"
	"svc/storage"
)

// entityCount is how many live entities of name/1 tenant A has.
func entityCount(t testing.TB, e *entityEnv, name string) int64 {
	t.Helper()
	n, err := e.ents.Count(t.Context(), "A", storage.ModelKey{Name: name, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// emptyObjects is a JSON array of n empty objects: ~3 bytes an entity.
func emptyObjects(n int) []byte {
	return append(append([]byte{'['}, bytes.TrimSuffix(bytes.Repeat([]byte("{},"), n), []byte(","))...), ']')
}

// TestEntitiesPerRequestCap: one small body of empty objects must not
// create more than SVC_MAX_ENTITIES_PER_REQUEST entities. Over the cap, array
// create, collection create and collection update answer 413
// TOO_MANY_ENTITIES naming the setting, and nothing is written even when the
// request would have committed in several transactionWindow chunks.
func TestEntitiesPerRequestCap(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			t.Run("default", func(t *testing.T) {
				env := newEntityEnv(t, engine)
				env.lockedModel("A", "amp", 1, `{"a":1}`)
				// 10,001 empty objects are 30 KB; the old code created them all.
				body := emptyObjects(entity.DefaultMaxPerRequest + 1)
				props := env.call("A", "POST", "/entity/JSON/amp/1?transactionWindow=1000", body).problem(t, 413, "TOO_MANY_ENTITIES")
				if props["setting"] != "SVC_MAX_ENTITIES_PER_REQUEST" || props["limit"] != float64(entity.DefaultMaxPerRequest) {
					t.Fatalf("properties %v", props)
				}
				if n := entityCount(t, env, "amp"); n != 0 {
					t.Fatalf("%d entities written by a refused request", n)
				}
			})
			t.Run("configured", func(t *testing.T) {
				env := newEntityEnv(t, engine, entity.WithMaxPerRequest(5))
				env.lockedModel("A", "amp", 1, `{"a":1}`)
				// At the cap: accepted, over three chunks.
				var res []txResult
				env.call("A", "POST", "/entity/JSON/amp/1?transactionWindow=2", emptyObjects(5)).ok(t).decode(t, &res)
				if len(res) != 3 {
					t.Fatalf("at the cap: %d chunks, want 3", len(res))
				}
				var ids []string
				for _, r := range res {
					ids = append(ids, r.EntityIDs...)
				}
				item := func(i int) string {
					return fmt.Sprintf(`{"model":{"name":"amp","version":1},"payload":"{\"a\":%d}"}`, i)
				}
				upd := func(i int) string {
					return fmt.Sprintf(`{"id":%q,"payload":"{\"a\":%d}"}`, ids[i%len(ids)], 100+i)
				}
				list := func(n int, f func(int) string) []byte {
					parts := make([]string, n)
					for i := range parts {
						parts[i] = f(i)
					}
					return []byte("[" + strings.Join(parts, ",") + "]")
				}
				for _, c := range []struct {
					name, method, path string
					body               []byte
				}{
					{"array create", "POST", "/entity/JSON/amp/1?transactionWindow=2", emptyObjects(6)},
					{"collection create", "POST", "/entity/JSON?transactionWindow=2", list(6, item)},
					{"collection update", "PUT", "/entity/JSON?transactionWindow=2", list(6, upd)},
				} {
					props := env.call("A", c.method, c.path, c.body).problem(t, 413, "TOO_MANY_ENTITIES")
					if props["setting"] != "SVC_MAX_ENTITIES_PER_REQUEST" || props["limit"] != float64(5) || props["count"] != float64(6) {
						t.Fatalf("%s: properties %v", c.name, props)
					}
				}
				// Nothing half-written: still the five entities, each at its
				// first revision with an empty document.
				if n := entityCount(t, env, "amp"); n != 5 {
					t.Fatalf("%d entities after refused requests, want 5", n)
				}
				for _, id := range ids {
					e := env.get("A", "/entity/"+id)
					if string(e.Data) != "{}" {
						t.Fatalf("entity %s changed by a refused update: %s", id, e.Data)
					}
				}
				// At the cap the collection operations still work.
				env.call("A", "POST", "/entity/JSON?transactionWindow=2", list(5, item)).ok(t)
				env.call("A", "PUT", "/entity/JSON?transactionWindow=2", list(5, upd)).ok(t)
				if n := entityCount(t, env, "amp"); n != 10 {
					t.Fatalf("%d entities, want 10", n)
				}
			})
		})
	}
}

// TestGroupedStatsBodyOverLimit: grouped stats answer a body over 10 MiB
// with 413 BAD_REQUEST (docs/decisions/0003-http-surface-and-routing.md), not the entity writes' 400.
func TestGroupedStatsBodyOverLimit(t *testing.T) {
	t.Parallel()
	env := newEntityEnv(t, "memory")
	env.lockedModel("A", "gs", 1, `{"a":1}`)
	big := append([]byte(`{"groupBy":["state"],"pad":"`), bytes.Repeat([]byte("x"), entity.MaxBodyBytes)...)
	big = append(big, `"}`...)
	env.call("A", "POST", "/entity/stats/gs/1/query", big).problem(t, 413, "BAD_REQUEST")
	// At the limit the body is parsed (and refused for its unknown member).
	env.call("A", "POST", "/entity/stats/gs/1/query", []byte(`{"groupBy":["state"],"pad":"x"}`)).problem(t, 400, "MALFORMED_REQUEST")
}

// TestRefusedCollectionLeavesModelUnwidened: a collection create whose
// second document of a model is refused (a new field at change level TYPE)
// must not widen the model with the first (a string where a number was):
// the item is still named, and a refused request writes nothing.
func TestRefusedCollectionLeavesModelUnwidened(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newEntityEnv(t, engine)
			env.lockedModel("A", "grow", 1, `{"a":1}`)
			env.call("A", "POST", "/model/grow/1/changeLevel/TYPE", nil).ok(t)
			before := env.call("A", "GET", "/model/export/SIMPLE_VIEW/grow/1", nil).ok(t).body
			body := []byte(`[{"model":{"name":"grow","version":1},"payload":"{\"a\":\"wider\"}"},` +
				`{"model":{"name":"grow","version":1},"payload":"{\"a\":2,\"b\":1}"}]`)
			r := env.call("A", "POST", "/entity/JSON", body)
			if r.status < 400 || r.status >= 500 || !strings.Contains(string(r.body), "item 1") {
				t.Fatalf("refused collection: %d %s", r.status, r.body)
			}
			after := env.call("A", "GET", "/model/export/SIMPLE_VIEW/grow/1", nil).ok(t).body
			if !bytes.Equal(before, after) {
				t.Fatalf("the refused request widened the model:\nbefore %s\nafter  %s", before, after)
			}
			if n := entityCount(t, env, "grow"); n != 0 {
				t.Fatalf("%d entities written by a refused request", n)
			}
		})
	}
}
