package fast

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/compute/member"
	"svc/compute/wire"
)

// keyedModel registers person/1 in tenant with two unique keys, email
// and the composite (org, n), and locks it.
func (e *entityEnv) keyedModel(tenant string) {
	e.t.Helper()
	e.call(tenant, "POST", "/model/import/JSON/SAMPLE_DATA/person/1",
		[]byte(`{"email":"a@x","org":"o","n":1,"name":"x","tags":["t"]}`)).ok(e.t)
	e.call(tenant, "PUT", "/model/person/1/unique-keys",
		[]byte(`{"uniqueKeys":[{"id":"email","fields":["$.email"]},{"id":"orgN","fields":["$.org","$.n"]}]}`)).ok(e.t)
	e.call(tenant, "PUT", "/model/person/1/lock", nil).ok(e.t)
}

// Unique keys are enforced on every HTTP write path (docs/decisions/0023-unique-keys.md),
// on both engines: 409 UNIQUE_VIOLATION for a taken value, 422
// INVALID_UNIQUE_KEY for a partial key, after validation and before the
// conflict; deletes and rewrites free values.
func TestUniqueKeysHTTP(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newEntityEnv(t, engine)
			env.keyedModel("t1")
			post := func(body string) entityResp {
				return env.call("t1", "POST", "/entity/JSON/person/1", []byte(body))
			}
			a, _ := env.create("t1", "person", 1, `{"email":"a@x","org":"o","n":1}`)

			t.Run("create", func(t *testing.T) {
				env := env.with(t)
				p := post(`{"email":"a@x"}`).problem(t, 409, "UNIQUE_VIOLATION")
				if p["uniqueKey"] != "email" || p["entityName"] != "person" {
					t.Fatalf("properties %v", p)
				}
				post(`{"org":"o","n":1}`).problem(t, 409, "UNIQUE_VIOLATION")
				// Partial key: 422, which comes before the taken email.
				post(`{"email":"a@x","org":"o"}`).problem(t, 422, "INVALID_UNIQUE_KEY")
				post(`{"n":2,"org":null}`).problem(t, 422, "INVALID_UNIQUE_KEY")
				// Validation comes before the key check.
				post(`{"org":{"x":1}}`).problem(t, 400, "BAD_REQUEST")
				// All-null keys are exempt, any number of times.
				env.create("t1", "person", 1, `{"name":"n1"}`)
				env.create("t1", "person", 1, `{"name":"n2","email":null,"org":null,"n":null}`)
				env.create("t1", "person", 1, `{"name":"n3"}`)
				// Byte-exact: other case, other number text.
				env.create("t1", "person", 1, `{"email":"A@x"}`)
				env.create("t1", "person", 1, `{"org":"o","n":1.0}`)
				env.create("t1", "person", 1, `{"org":"o ","n":1}`)
				// Another tenant has its own values.
				env.keyedModel("t2")
				env.create("t2", "person", 1, `{"email":"a@x","org":"o","n":1}`)
			})

			t.Run("array and collection", func(t *testing.T) {
				env := env.with(t)
				before := env.count("t1", "person", 1)
				env.call("t1", "POST", "/entity/JSON/person/1", []byte(`[{"email":"c1@x"},{"email":"c1@x"}]`)).problem(t, 409, "UNIQUE_VIOLATION")
				env.call("t1", "POST", "/entity/JSON/person/1", []byte(`[{"email":"c2@x"},{"email":"a@x"}]`)).problem(t, 409, "UNIQUE_VIOLATION")
				coll := func(docs ...string) []byte {
					items := make([]string, len(docs))
					for i, d := range docs {
						items[i] = fmt.Sprintf(`{"model":{"name":"person","version":1},"payload":%q}`, d)
					}
					return []byte("[" + strings.Join(items, ",") + "]")
				}
				env.call("t1", "POST", "/entity/JSON", coll(`{"email":"c3@x"}`, `{"email":"c3@x"}`)).problem(t, 409, "UNIQUE_VIOLATION")
				p := env.call("t1", "POST", "/entity/JSON", coll(`{"email":"c4@x"}`, `{"org":"o"}`)).problem(t, 422, "INVALID_UNIQUE_KEY")
				_ = p
				if n := env.count("t1", "person", 1); n != before {
					t.Fatalf("refused chunks wrote entities: %d → %d", before, n)
				}
				// A later chunk fails alone: the first stays.
				var res []txResult
				env.call("t1", "POST", "/entity/JSON/person/1?transactionWindow=1", []byte(`[{"email":"c5@x"},{"email":"c5@x"}]`)).ok(t).decode(t, &res)
				if len(res) != 2 || res[1].Error == nil || res[1].Error.Code != "UNIQUE_VIOLATION" || res[1].Error.ChunkIndex != 1 {
					t.Fatalf("chunked answer %+v", res)
				}
			})

			t.Run("update paths", func(t *testing.T) {
				env := env.with(t)
				b, _ := env.create("t1", "person", 1, `{"email":"b@x"}`)
				put := func(id, path, body string) entityResp {
					return env.call("t1", "PUT", "/entity/JSON/"+id+path, []byte(body))
				}
				put(b, "", `{"email":"a@x"}`).problem(t, 409, "UNIQUE_VIOLATION")
				put(b, "/UPDATE", `{"email":"a@x"}`).problem(t, 409, "UNIQUE_VIOLATION")
				put(b, "", `{"email":"b@x","n":5}`).problem(t, 422, "INVALID_UNIQUE_KEY")
				// Keeping its own value is no conflict.
				put(b, "", `{"email":"b@x","name":"kept"}`).ok(t)
				patch := func(id, body string) entityResp {
					return env.call("t1", "PATCH", "/entity/JSON/"+id, []byte(body), "Content-Type", "application/merge-patch+json", "If-Match", "*")
				}
				patch(b, `{"email":"a@x"}`).problem(t, 409, "UNIQUE_VIOLATION")
				patch(a, `{"n":null}`).problem(t, 422, "INVALID_UNIQUE_KEY")
				coll := fmt.Sprintf(`[{"id":%q,"payload":"{\"email\":\"a@x\"}"}]`, b)
				env.call("t1", "PUT", "/entity/JSON", []byte(coll)).problem(t, 409, "UNIQUE_VIOLATION")
				// Two entities swap values in one collection update.
				swap := fmt.Sprintf(`[{"id":%q,"payload":"{\"email\":\"b@x\",\"org\":\"o\",\"n\":1}"},{"id":%q,"payload":"{\"email\":\"a@x\"}"}]`, a, b)
				env.call("t1", "PUT", "/entity/JSON", []byte(swap)).ok(t)
				// Rewriting frees the old value: b now holds a@x, so b@x is free
				// after a gives it up.
				patch(a, `{"email":"z@x"}`).ok(t)
				env.create("t1", "person", 1, `{"email":"b@x"}`)
				post(`{"email":"a@x"}`).problem(t, 409, "UNIQUE_VIOLATION")
				// Delete frees.
				env.call("t1", "DELETE", "/entity/"+b, nil).ok(t)
				env.create("t1", "person", 1, `{"email":"a@x"}`)
				// Delete by condition frees.
				env.call("t1", "DELETE", "/entity/person/1", []byte(`{"type":"simple","jsonPath":"$.email","operatorType":"EQUALS","value":"a@x"}`)).ok(t)
				env.create("t1", "person", 1, `{"email":"a@x"}`)
				// Delete all frees.
				env.call("t1", "DELETE", "/entity/person/1", nil).ok(t)
				env.create("t1", "person", 1, `{"email":"z@x","org":"o","n":1}`)
			})
		})
	}
}

// Of concurrent creates of one value exactly one wins, on both engines,
// in each of 50 races.
func TestUniqueKeyRaces(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newEntityEnv(t, engine)
			env.keyedModel("t1")
			const racers = 4
			for round := 0; round < 50; round++ {
				var wg sync.WaitGroup
				status := make([]int, racers)
				codes := make([]string, racers)
				for i := range racers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := env.call("t1", "POST", "/entity/JSON/person/1", []byte(fmt.Sprintf(`{"email":"r%d@x","name":"%d"}`, round, i)))
						status[i], codes[i] = r.status, problemCode(r.body)
					}()
				}
				wg.Wait()
				won := 0
				for i := range racers {
					switch {
					case status[i] == 200:
						won++
					case status[i] != 409 || codes[i] != "UNIQUE_VIOLATION":
						t.Fatalf("round %d: racer %d got %d %s", round, i, status[i], codes[i])
					}
				}
				if won != 1 {
					t.Fatalf("round %d: %d creates won", round, won)
				}
			}
			if n := env.count("t1", "person", 1); n != 50 {
				t.Fatalf("%d entities after 50 races", n)
			}
		})
	}
}

// Unique keys on the gRPC CRUD RPCs and on writes of callbacks joined to
// a transaction: a taken value fails the gRPC write with
// UNIQUE_VIOLATION, and a callback's duplicate fails the request it
// joined, on both engines.
func TestUniqueKeysGRPCAndJoined(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newJoinEnv(t, engine, time.Minute)
			env.setupModels()
			env.entityEnv.keyedModel("A")
			grpcWrite := func(tok, typ string, payload map[string]any) wire.TransactionResponse {
				var tr wire.TransactionResponse
				if err := env.grpcCall("A", tok, typ, map[string]any{"dataFormat": "JSON", "payload": payload}, &tr); err != nil {
					t.Fatalf("%s: %v", typ, err)
				}
				return tr
			}
			person := map[string]any{"name": "person", "version": 1}
			ok := grpcWrite("", wire.TypeEntityCreateRequest, map[string]any{"model": person, "data": map[string]any{"email": "g@x"}})
			if !ok.Success {
				t.Fatalf("gRPC create: %+v", ok.Error)
			}
			taken := func(tr wire.TransactionResponse, code string) {
				t.Helper()
				if tr.Success || tr.Error == nil || !strings.HasPrefix(tr.Error.Message, code+": ") {
					t.Fatalf("want %s, got %+v", code, tr)
				}
			}
			taken(grpcWrite("", wire.TypeEntityCreateRequest, map[string]any{"model": person, "data": map[string]any{"email": "g@x"}}), "UNIQUE_VIOLATION")
			taken(grpcWrite("", wire.TypeEntityCreateRequest, map[string]any{"model": person, "data": map[string]any{"org": "o"}}), "INVALID_UNIQUE_KEY")
			other, _ := env.create("A", "person", 1, `{"email":"h@x"}`)
			taken(grpcWrite("", wire.TypeEntityUpdateRequest, map[string]any{"entityId": other, "data": map[string]any{"email": "g@x"}}), "UNIQUE_VIOLATION")

			// A callback writes a duplicate inside the owner's transaction:
			// the owner's request fails and nothing of it commits.
			env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
				st, b, err := env.httpCall("A", c.TxToken, "POST", "/entity/JSON/person/1", `{"email":"g@x","name":"joined"}`)
				if err != nil || st != 200 {
					return nil, fmt.Errorf("joined create: %d %s %v", st, b, err)
				}
				return nil, nil
			})
			before := env.count("A", "person", 1)
			env.call("A", "POST", "/entity/JSON/order/1", []byte(`{"n":1,"note":"x"}`)).problem(t, 409, "UNIQUE_VIOLATION")
			if n := env.count("A", "person", 1); n != before {
				t.Fatalf("the refused transaction wrote: %d → %d", before, n)
			}
			// A free value commits with the owner.
			env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
				tr := grpcWrite(c.TxToken, wire.TypeEntityCreateRequest, map[string]any{"model": person, "data": map[string]any{"email": "j@x"}})
				if !tr.Success {
					return nil, fmt.Errorf("joined gRPC create: %+v", tr.Error)
				}
				return nil, nil
			})
			env.create("A", "order", 1, `{"n":1,"note":"x"}`)
			env.call("A", "POST", "/entity/JSON/person/1", []byte(`{"email":"j@x"}`)).problem(t, 409, "UNIQUE_VIOLATION")
		})
	}
}
