package fast

import (
	"fmt"
	"testing"
)

// TestCollectionBodyErrors pins the exact details of collection create
// and update bodies svc cannot read, which the HTTP adapter decodes before
// the entity service sees the items, and the item checks the service
// still makes.
func TestCollectionBodyErrors(t *testing.T) {
	t.Parallel()
	e := newEntityEnv(t, "memory")
	e.lockedModel("t1", "c", 1, `{"n":1}`)
	for _, c := range []struct{ method, path, body, detail string }{
		{"POST", "/entity/JSON", `{}`, "BAD_REQUEST: invalid JSON array map[errorCode:BAD_REQUEST retryable:false]"},
		{"POST", "/entity/JSON", `null`, "BAD_REQUEST: invalid JSON array map[errorCode:BAD_REQUEST retryable:false]"},
		{"POST", "/entity/JSON", `[{"model":1}]`, "BAD_REQUEST: invalid JSON array map[errorCode:BAD_REQUEST retryable:false]"},
		{"POST", "/entity/JSON", `[{"a":1,"a":2}]`, "BAD_REQUEST: duplicate key \"a\" at $[0].a: a JSON object may name a member once (I-JSON, RFC 7493) map[errorCode:BAD_REQUEST field:$[0].a key:a retryable:false]"},
		{"POST", "/entity/JSON", `[{"payload":"{}"}]`, "BAD_REQUEST: item 0: missing model map[errorCode:BAD_REQUEST retryable:false]"},
		{"POST", "/entity/JSON", `[{"model":{"name":"c","version":1}}]`, "BAD_REQUEST: item 0: invalid JSON payload map[errorCode:BAD_REQUEST retryable:false]"},
		{"PUT", "/entity/XML", `[]`, "BAD_REQUEST: collection update accepts JSON only map[errorCode:BAD_REQUEST retryable:false]"},
		{"PUT", "/entity/JSON", `[]`, "BAD_REQUEST: collection is empty map[errorCode:BAD_REQUEST retryable:false]"},
		{"PUT", "/entity/JSON", `null`, "BAD_REQUEST: collection is empty map[errorCode:BAD_REQUEST retryable:false]"},
		{"PUT", "/entity/JSON", `[{"id":7}]`, "BAD_REQUEST: invalid JSON array map[errorCode:BAD_REQUEST retryable:false]"},
		{"PUT", "/entity/JSON", `[{"payload":"{}"}]`, "BAD_REQUEST: item 0: missing id map[errorCode:BAD_REQUEST retryable:false]"},
		{"PUT", "/entity/JSON", `[{"id":"x","payload":"{}"}]`, "BAD_REQUEST: item 0: invalid id map[errorCode:BAD_REQUEST retryable:false]"},
	} {
		r := e.call("t1", c.method, c.path, []byte(c.body))
		props := r.problem(t, 400, "BAD_REQUEST")
		if got := fmt.Sprint(r.obj(t)["detail"], " ", props); got != c.detail {
			t.Errorf("%s %s %s:\n got %q\nwant %q", c.method, c.path, c.body, got, c.detail)
		}
	}
}
