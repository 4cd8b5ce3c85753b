package fast

import (
	"fmt"
	"strings"
	"testing"
)

// TestUniqueKeysBodyErrors pins the exact details of a unique-key set
// body svc cannot read (the HTTP adapter decodes it before the model is
// looked up, so an unknown model still answers the body's fault).
func TestUniqueKeysBodyErrors(t *testing.T) {
	t.Parallel()
	e := newEntityEnv(t, "memory")
	e.lockedModel("t1", "uk", 1, `{"email":"a"}`)
	for _, c := range []struct{ path, body, detail string }{
		{"/model/uk/1/unique-keys", `{}`, "BAD_REQUEST: invalid request body: uniqueKeys is required map[errorCode:BAD_REQUEST retryable:false]"},
		{"/model/uk/1/unique-keys", `{"uniqueKeys":{}}`, "BAD_REQUEST: invalid request body: json: cannot unmarshal object into Go struct field setUniqueKeysRequest.uniqueKeys of type []model.UniqueKey map[errorCode:BAD_REQUEST retryable:false]"},
		{"/model/uk/1/unique-keys", `{"uniqueKeys":[{"id":1}]}`, "BAD_REQUEST: invalid request body: json: cannot unmarshal number into Go struct field setUniqueKeysRequest.uniqueKeys.0.id of type string map[errorCode:BAD_REQUEST retryable:false]"},
		{"/model/uk/1/unique-keys", `[`, "BAD_REQUEST: invalid request body: unexpected end of JSON input map[errorCode:BAD_REQUEST retryable:false]"},
		{"/model/none/1/unique-keys", `{"uniqueKeys":"x"}`, "BAD_REQUEST: invalid request body: json: cannot unmarshal string into Go struct field setUniqueKeysRequest.uniqueKeys of type []model.UniqueKey map[errorCode:BAD_REQUEST retryable:false]"},
		{"/model/uk/1/unique-keys", `{"uniqueKeys":[` + strings.Repeat(" ", 1<<20) + `]}`, "BAD_REQUEST: invalid request body: larger than 1048576 bytes map[errorCode:BAD_REQUEST retryable:false]"},
	} {
		r := e.call("t1", "PUT", c.path, []byte(c.body))
		props := r.problem(t, 400, "BAD_REQUEST")
		if got := fmt.Sprint(r.obj(t)["detail"], " ", props); got != c.detail {
			t.Errorf("%s %.60s:\n got %q\nwant %q", c.path, c.body, got, c.detail)
		}
	}
}
