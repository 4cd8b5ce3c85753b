package fast

import (
	"bytes"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
)

func TestMessageAPI(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newSearchEnv(t, engine, nil)
			body := []byte(`{"payload": {"a": [1, 2.50, "x"], "b": null}, "metaData": {"k": "v", "n": 3}}`)
			var created []struct {
				EntityIDs     []string `json:"entityIds"`
				TransactionID string   `json:"transactionId"`
			}
			env.call("A", "POST", "/message/new/orders.v1", body, "Content-Type", "application/json",
				"X-Message-ID", "m-1", "X-Correlation-ID", "c-9").ok(t).decode(t, &created)
			if len(created) != 1 || len(created[0].EntityIDs) != 1 || created[0].TransactionID == "" {
				t.Fatalf("create answer %+v", created)
			}
			id := created[0].EntityIDs[0]
			var got struct {
				Header   map[string]any  `json:"header"`
				MetaData map[string]any  `json:"metaData"`
				Content  json.RawMessage `json:"content"`
			}
			env.call("A", "GET", "/message/"+id, nil).ok(t).decode(t, &got)
			h := got.Header
			if h["subject"] != "orders.v1" || h["contentType"] != "application/json" || h["contentEncoding"] != "UTF-8" ||
				h["messageId"] != "m-1" || h["correlationId"] != "c-9" || h["contentLength"] != float64(len(body)) {
				t.Fatalf("header %v", h)
			}
			if _, ok := h["userId"]; ok {
				t.Fatalf("empty optional header member present: %v", h)
			}
			if got.MetaData["k"] != "v" || got.MetaData["n"] != float64(3) {
				t.Fatalf("metaData %v", got.MetaData)
			}
			if string(got.Content) != `{"a":[1,2.50,"x"],"b":null}` {
				t.Fatalf("content %s", got.Content)
			}
			// GET /message/get/{id} is an alias of GET /message/{id} (docs/decisions/0022-audit-and-messages.md),
			// with the same tenant check.
			var alias struct {
				Header  map[string]any  `json:"header"`
				Content json.RawMessage `json:"content"`
			}
			env.call("A", "GET", "/message/get/"+id, nil).ok(t).decode(t, &alias)
			if alias.Header["messageId"] != "m-1" || string(alias.Content) != string(got.Content) {
				t.Fatalf("alias answered %+v", alias)
			}
			env.call("B", "GET", "/message/get/"+id, nil).problem(t, 404, "ENTITY_NOT_FOUND")
			// meta-data is read as metaData; no metaData is {}.
			var c2 []struct{ EntityIDs []string }
			env.call("A", "POST", "/message/new/s", []byte(`{"payload":null,"meta-data":{"x":1}}`), "Content-Type", "text/plain").ok(t).decode(t, &c2)
			env.call("A", "GET", "/message/"+c2[0].EntityIDs[0], nil).ok(t).decode(t, &got)
			if got.MetaData["x"] != float64(1) || string(got.Content) != "null" {
				t.Fatalf("meta-data message: %+v", got)
			}
			// Tenant isolation and errors.
			p := env.call("B", "GET", "/message/"+id, nil).problem(t, 404, "ENTITY_NOT_FOUND")
			if p["messageId"] != id {
				t.Fatalf("404 properties %v", p)
			}
			env.call("B", "DELETE", "/message/"+id, nil).problem(t, 404, "ENTITY_NOT_FOUND")
			env.call("A", "GET", "/message/nope", nil).problem(t, 400, "BAD_REQUEST")
			env.call("A", "POST", "/message/new/s", []byte(`{"metaData":{}}`), "Content-Type", "application/json").problem(t, 400, "BAD_REQUEST")
			env.call("A", "POST", "/message/new/s", []byte(`[1]`), "Content-Type", "application/json").problem(t, 400, "BAD_REQUEST")
			env.call("A", "POST", "/message/new/bad%20subject", []byte(`{"payload":1}`), "Content-Type", "application/json").problem(t, 400, "BAD_REQUEST")
			big := append([]byte(`{"payload":"`), bytes.Repeat([]byte("x"), 10<<20)...)
			big = append(big, `"}`...)
			if r := env.call("A", "POST", "/message/new/s", big, "Content-Type", "application/json"); r.status != 413 {
				t.Fatalf("over 10 MiB: %d %s", r.status, r.body)
			}
			// Delete one, then it is gone.
			var del struct{ EntityIDs []string }
			env.call("A", "DELETE", "/message/"+id, nil).ok(t).decode(t, &del)
			if len(del.EntityIDs) != 1 || del.EntityIDs[0] != id {
				t.Fatalf("delete answer %+v", del)
			}
			env.call("A", "DELETE", "/message/"+id, nil).problem(t, 404, "ENTITY_NOT_FOUND")
			// Batch delete echoes every id; non-UUIDs are refused.
			other := c2[0].EntityIDs[0]
			unknown := "5e0c4d1a-0000-1000-8000-000000000000"
			r := env.call("A", "DELETE", "/message", []byte(`["`+other+`","`+unknown+`"]`)).ok(t)
			if want := `[{"entityIds":["` + other + `","` + unknown + `"],"success":true}]`; string(r.body) != want {
				t.Fatalf("batch delete %s", r.body)
			}
			env.call("A", "GET", "/message/"+other, nil).problem(t, 404, "ENTITY_NOT_FOUND")
			if r := env.call("A", "DELETE", "/message", []byte(`[]`)).ok(t); string(r.body) != `[{"entityIds":[],"success":true}]` {
				t.Fatalf("empty batch %s", r.body)
			}
			env.call("A", "DELETE", "/message", []byte(`["x"]`)).problem(t, 400, "BAD_REQUEST")
			env.call("A", "DELETE", "/message", []byte(`{"a":1}`)).problem(t, 400, "BAD_REQUEST")
		})
	}
}

func TestAccountAPI(t *testing.T) {
	t.Parallel()
	env := newSearchEnv(t, "memory", nil)
	var acc struct {
		Info struct {
			UserID      string `json:"userId"`
			LegalEntity struct {
				ID string `json:"id"`
			} `json:"legalEntity"`
			Sub struct {
				ID, Status, LegalEntityID string
			} `json:"currentSubscription"`
		} `json:"userAccountInfo"`
	}
	env.call("A", "GET", "/account", nil).ok(t).decode(t, &acc)
	if acc.Info.UserID != "u-A" || acc.Info.LegalEntity.ID != "A" || acc.Info.Sub.ID != "unlimited" ||
		acc.Info.Sub.Status != "ACTIVE" || acc.Info.Sub.LegalEntityID != "A" {
		t.Fatalf("account %+v", acc)
	}
	env.call("A", "GET", "/account/subscriptions", nil).problem(t, 501, "NOT_IMPLEMENTED")
	if r := env.call("", "GET", "/account", nil); r.status != 401 || !strings.Contains(string(r.body), "UNAUTHORIZED") {
		t.Fatalf("no principal: %d %s", r.status, r.body)
	}
}
