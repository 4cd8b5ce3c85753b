package fast

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/cluster/peer"
	"svc/compute"
	"svc/compute/member"
	"svc/compute/wire"
)

// TestClusterInternalRouteMalformedPayload: a call that is validly sealed
// with the cluster key but whose payload is malformed answers 400
// BAD_REQUEST sealed to the request (the caller can authenticate the
// refusal), reaches no member, and is never a 500. Before, each of these
// answered 500 SERVER_ERROR (or 200 with the dispatch error in-band).
func TestClusterInternalRouteMalformedPayload(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t, time.Second, "A")
	a := env.nodes["A"]
	var calls atomic.Int32
	env.member(a, "T", member.Handlers{Processor: func(ctx context.Context, c *member.Call) (json.RawMessage, error) {
		calls.Add(1)
		return json.RawMessage(`{"ok":true}`), nil
	}}, "far")
	key, _ := peer.NewKey(clusterSecret)
	req := `{"entityId":"00000000-0000-0000-0000-000000000001","processorId":"p","processorName":"p",` +
		`"workflow":{"id":"w","name":"w"},"transition":{"id":"t","name":"t"},"success":true}`
	callout := func(fields string) string {
		return `{"type":"` + wire.TypeProcessorRequest + `","what":"processor p","tenant":"T","authKind":"user","authId":"u",` +
			`"tags":["far"],"tagsCsv":"far","timeoutMs":5000` + fields + `}`
	}
	post := func(payload string) (int, string, []byte, []byte) {
		t.Helper()
		now := time.Now().Unix()
		body := key.Seal("POST", compute.CalloutPath, now, []byte(payload))
		hr, err := http.NewRequest("POST", a.root+compute.CalloutPath, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		hr.Header.Set("Content-Type", peer.ContentType)
		hr.Header.Set(peer.HeaderTimestamp, strconv.FormatInt(now, 10))
		resp, err := a.client.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		plain, _ := key.OpenResponse("POST", compute.CalloutPath, now, peer.Nonce(body), b)
		return resp.StatusCode, resp.Header.Get("Content-Type"), b, plain
	}
	cases := []struct{ name, payload, detail string }{
		{"not JSON", `{"type":`, "not a callout"},
		{"empty", ``, "not a callout"},
		{"JSON null", `null`, "no request"},
		{"JSON array", `[1,2]`, "not a callout"},
		{"string", `"x"`, "not a callout"},
		{"no request", callout(``), "no request"},
		{"request null", callout(`,"request":null`), "no request"},
		{"request not an object", callout(`,"request":[1]`), "not a callout"},
		{"tenant a number", strings.Replace(callout(`,"request":`+req), `"tenant":"T"`, `"tenant":5`, 1), "not a callout"},
		{"no tenant", strings.Replace(callout(`,"request":`+req), `"tenant":"T",`, ``, 1), "no tenant"},
		{"unknown type", strings.Replace(callout(`,"request":`+req), wire.TypeProcessorRequest, "Nope", 1), `unknown type "Nope"`},
		{"unknown principal kind", strings.Replace(callout(`,"request":`+req), `"authKind":"user"`, `"authKind":"root"`, 1), `principal kind "root"`},
		{"negative timeout", strings.Replace(callout(`,"request":`+req), `"timeoutMs":5000`, `"timeoutMs":-1`, 1), "timeoutMs -1"},
		{"timeout past time.Duration", strings.Replace(callout(`,"request":`+req), `"timeoutMs":5000`, `"timeoutMs":9223372036854775807`, 1), "timeoutMs 9223372036854775807"},
		{"timeout too big for int64", strings.Replace(callout(`,"request":`+req), `"timeoutMs":5000`, `"timeoutMs":1e30`, 1), "not a callout"},
		{"trailing data", callout(`,"request":`+req) + `{}`, "not a callout"},
		{"tags not strings", strings.Replace(callout(`,"request":`+req), `"tags":["far"]`, `"tags":[1]`, 1), "not a callout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, ctype, raw, plain := post(c.payload)
			if st != 400 || ctype != peer.ContentType || plain == nil {
				t.Fatalf("%d %s (opens: %v) %q, want a sealed 400", st, ctype, plain != nil, raw)
			}
			var p struct {
				Status int    `json:"status"`
				Detail string `json:"detail"`
				Props  struct {
					ErrorCode string `json:"errorCode"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(plain, &p); err != nil || p.Status != 400 || p.Props.ErrorCode != "BAD_REQUEST" ||
				!strings.Contains(p.Detail, c.detail) {
				t.Fatalf("sealed answer %s (%v), want a 400 BAD_REQUEST problem saying %q", plain, err, c.detail)
			}
		})
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("malformed calls reached the member %d times", n)
	}
	// The well-formed call is still served.
	st, _, raw, plain := post(callout(`,"request":` + req))
	if st != 200 || !strings.Contains(string(plain), `"ok":true`) {
		t.Fatalf("well-formed call: %d %q", st, raw)
	}
}
