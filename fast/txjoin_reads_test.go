package fast

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"google.golang.org/grpc/metadata"

	"svc/compute/member"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
)

// grpcSearch runs EntitySearchRequest on entitySearchCollection as
// tenant's member inside the transaction of tok; it returns the data of
// the entities found.
func (e *joinEnv) grpcSearch(tenant, tok string, req map[string]any) ([]string, error) {
	var out []string
	err := e.grpcStream(tenant, tok, wire.TypeEntitySearchRequest, req, func(ev *ce.CloudEvent) error {
		var er wire.EntityResponse
		if err := wire.Decode(ev, &er); err != nil {
			return err
		}
		if !er.Success {
			return fmt.Errorf("search failed: %+v", er.Error)
		}
		if er.Payload.Data != nil {
			out = append(out, string(er.Payload.Data))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// grpcStream runs a request of typ on entitySearchCollection as tenant's
// member inside the transaction of tok, handing each answer to fn.
func (e *joinEnv) grpcStream(tenant, tok, typ string, req map[string]any, fn func(*ce.CloudEvent) error) error {
	ev, err := wire.New("urn:test", typ, req)
	if err != nil {
		return err
	}
	md := []string{"authorization", "Bearer m2m-" + tenant}
	if tok != "" {
		md = append(md, "tx-token", tok)
	}
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), md...), 20*time.Second)
	defer cancel()
	st, err := e.rpc.EntitySearchCollection(ctx, ev)
	if err != nil {
		return err
	}
	for {
		rev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(rev); err != nil {
			return err
		}
	}
}

// joinedData reads an answer of envelopes (a list's array, or direct
// search's one envelope per line) as their data, sorted.
func joinedData(b []byte) []string {
	var envs []envelope
	if err := json.Unmarshal(b, &envs); err != nil {
		envs = nil
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e envelope
			if json.Unmarshal([]byte(line), &e) == nil {
				envs = append(envs, e)
			}
		}
	}
	out := make([]string, len(envs))
	for i, e := range envs {
		out[i] = string(e.Data)
	}
	sort.Strings(out)
	return out
}

func kEquals(v string) string {
	return fmt.Sprintf(`{"type":"simple","jsonPath":"$.k","operatorType":"EQUALS","value":%q}`, v)
}

// TestJoinReadsOwnWrites: a processor on a real member calls back with
// its token and reads, over HTTP and gRPC, the transaction's uncommitted
// writes — its own create, update and delete and the owner's entity — in
// list, direct search, gRPC search, stats, stats by state and changes;
// delete by condition inside the transaction works and commits with the
// owner. A standalone read meanwhile sees committed data. On every
// engine.
func TestJoinReadsOwnWrites(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newJoinEnv(t, engine, time.Minute)
			env.setupModels()
			s1, _ := env.create("A", "side", 1, `{"k":"c1"}`)
			s2, _ := env.create("A", "side", 1, `{"k":"c2"}`)
			created := make(chan string, 2)
			env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
				var ck checks
				tok := c.TxToken
				call := func(method, path, body string) (int, []byte) {
					st, b, err := env.httpCall("A", tok, method, path, body)
					ck.expect(err == nil, "%s %s: %v", method, path, err)
					return st, b
				}
				// Its own writes: create, update, delete.
				st, b := call("POST", "/entity/JSON/side/1", `{"k":"new"}`)
				var res []txResult
				_ = json.Unmarshal(b, &res)
				if st != 200 || len(res) != 1 || len(res[0].EntityIDs) != 1 {
					return nil, fmt.Errorf("callback create: %d %s", st, b)
				}
				n1 := res[0].EntityIDs[0]
				created <- n1
				st, b = call("PUT", "/entity/JSON/"+s1, `{"k":"upd"}`)
				ck.expect(st == 200, "callback update: %d %s", st, b)
				st, b = call("DELETE", "/entity/"+s2, "")
				ck.expect(st == 200, "callback delete: %d %s", st, b)

				// List.
				st, b = call("GET", "/entity/side/1", "")
				got := joinedData(b)
				ck.expect(st == 200 && strings.Join(got, " ") == `{"k":"new"} {"k":"upd"}`, "joined list: %d %v", st, got)
				st, b = call("GET", "/entity/side/1?pageSize=1&pageNumber=1", "")
				ck.expect(st == 200 && len(joinedData(b)) == 1, "joined list page 2 of 1: %d %s", st, b)
				// Direct search.
				for cond, want := range map[string]string{kEquals("new"): `{"k":"new"}`, kEquals("upd"): `{"k":"upd"}`, kEquals("c1"): "", kEquals("c2"): ""} {
					st, b = call("POST", "/search/direct/side/1", cond)
					got := strings.Join(joinedData(b), " ")
					ck.expect(st == 200 && got == want, "joined search %s: %d %s, want %s", cond, st, got, want)
				}
				// gRPC search.
				gs, err := env.grpcSearch("A", tok, map[string]any{"model": map[string]any{"name": "side", "version": 1},
					"condition": json.RawMessage(`{"type":"group","operator":"OR","conditions":[` + kEquals("new") + "," + kEquals("c2") + `]}`)})
				ck.expect(err == nil && strings.Join(gs, " ") == `{"k":"new"}`, "joined gRPC search: %v %v", gs, err)
				// Stats.
				var cnt struct {
					Count int `json:"count"`
				}
				st, b = call("GET", "/entity/stats/side/1", "")
				_ = json.Unmarshal(b, &cnt)
				ck.expect(st == 200 && cnt.Count == 2, "joined stats: %d %s", st, b)
				st, b = call("GET", "/entity/stats/states/side/1", "")
				ck.expect(st == 200 && strings.Contains(string(b), `"count":2`), "joined stats by state: %d %s", st, b)
				var sr wire.StatsResponse
				err = env.grpcStream("A", tok, wire.TypeEntityStatsGetRequest, map[string]any{"model": map[string]any{"name": "side", "version": 1}},
					func(ev *ce.CloudEvent) error { return wire.Decode(ev, &sr) })
				ck.expect(err == nil && sr.Success && sr.Count == 2, "joined gRPC stats: %+v %v", sr, err)
				// Changes.
				var ch []map[string]any
				st, b = call("GET", "/entity/"+n1+"/changes", "")
				_ = json.Unmarshal(b, &ch)
				ck.expect(st == 200 && len(ch) == 1 && ch[0]["changeType"] == "CREATE", "joined changes of a new entity: %d %s", st, b)
				st, b = call("GET", "/entity/"+s1+"/changes", "")
				ch = nil
				_ = json.Unmarshal(b, &ch)
				ck.expect(st == 200 && len(ch) == 2 && ch[0]["changeType"] == "UPDATE", "joined changes of an updated entity: %d %s", st, b)
				// The owner's entity as the run has it.
				st, b = call("GET", "/entity/"+c.Request.EntityID, "")
				var own envelope
				_ = json.Unmarshal(b, &own)
				ck.expect(st == 200 && string(own.Data) == `{"n":1,"note":"x"}`, "joined read of the owner's entity: %d %s", st, b)
				st, b = call("POST", "/search/direct/order/1", `{"type":"simple","jsonPath":"$.note","operatorType":"EQUALS","value":"x"}`)
				ck.expect(st == 200 && len(joinedData(b)) == 1, "joined search for the owner's entity: %d %s", st, b)

				// A standalone read sees committed data only.
				st, b, _ = env.httpCall("A", "", "GET", "/entity/side/1", "")
				got = joinedData(b)
				ck.expect(st == 200 && strings.Join(got, " ") == `{"k":"c1"} {"k":"c2"}`, "standalone list: %d %v", st, got)

				// Delete by condition inside the transaction.
				st, b = call("DELETE", "/entity/side/1", kEquals("upd"))
				ck.expect(st == 200 && strings.Contains(string(b), `"numberOfEntititesRemoved":1`), "joined delete by condition: %d %s", st, b)
				st, b = call("GET", "/entity/side/1", "")
				got = joinedData(b)
				ck.expect(st == 200 && strings.Join(got, " ") == `{"k":"new"}`, "list after joined delete by condition: %d %v", st, got)
				if err := ck.err(); err != nil {
					return nil, err
				}
				return json.RawMessage(`{"n":2,"note":"processed"}`), nil
			})
			_, entry := env.create("A", "order", 1, `{"n":1,"note":"x"}`)
			n1 := recv(t, created)
			// Everything committed with the owner.
			r := env.call("A", "GET", "/entity/side/1", nil).ok(t)
			if got := strings.Join(joinedData(r.body), " "); got != `{"k":"new"}` {
				t.Fatalf("committed side entities: %s", got)
			}
			if e := env.get("A", "/entity/"+n1); e.Meta.TransactionID != entry {
				t.Fatalf("callback create in %s, want %s", e.Meta.TransactionID, entry)
			}
			env.call("A", "GET", "/entity/"+s1, nil).problem(t, 404, "ENTITY_NOT_FOUND")
			env.call("A", "GET", "/entity/"+s2, nil).problem(t, 404, "ENTITY_NOT_FOUND")
		})
	}
}

// TestJoinSeesOwnerChunk: the callback of a chunk's second entity reads
// the first, settled by the owner in the same transaction, in a list.
func TestJoinSeesOwnerChunk(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newJoinEnv(t, engine, time.Minute)
			env.setupModels()
			seen := make(chan string, 2)
			env.onProcess(func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
				st, b, err := env.httpCall("A", c.TxToken, "POST", "/search/direct/order/1", `{"type":"simple","jsonPath":"$.n","operatorType":"EQUALS","value":7}`)
				if err != nil || st != 200 {
					return nil, fmt.Errorf("callback search: %d %s %v", st, b, err)
				}
				seen <- strings.Join(joinedData(b), " ")
				return nil, nil
			})
			env.call("A", "POST", "/entity/JSON/order/1", []byte(`[{"n":7,"note":"a"},{"n":7,"note":"b"}]`)).ok(t)
			if got := recv(t, seen); got != `{"n":7,"note":"a"}` {
				t.Fatalf("first item's callback saw %s", got)
			}
			if got := recv(t, seen); got != `{"n":7,"note":"a"} {"n":7,"note":"b"}` {
				t.Fatalf("second item's callback saw %s", got)
			}
		})
	}
}
