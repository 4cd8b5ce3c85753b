package fast

import (
	"testing"
)

// TestStreamDataGetExampleRuns (issue 26): the example request the OpenAPI
// document gives for stream-data get (and help stream-data shows) is
// accepted and reads rows with its columns.
func TestStreamDataGetExampleRuns(t *testing.T) {
	e := newStreamEnv(t, "memory")
	e.lockedModel("t1", "order", 1, `{"customer":"ann","total":3}`)
	e.call("t1", "POST", "/entity/JSON/order/1", []byte(`{"customer":"bob","total":5}`)).ok(t)
	var r fetchResult
	e.call("t1", "POST", "/platform-api/stream-data/get", []byte(streamDataGetExample)).ok(t).decode(t, &r)
	if len(r.Rows) != 1 || r.Rows[0].Columns["$.customer"] != "bob" || r.Rows[0].Columns["$.total"] != float64(5) {
		t.Fatalf("rows %+v", r.Rows)
	}
}
