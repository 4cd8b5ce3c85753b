package fast

import (
	"bufio"
	"bytes"
	"context"
	stdjson "encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"svc/entity"
	"svc/internal/await"
)

// phaseLog records the merge-patch phases a service went through; wait
// returns once a phase has been seen (bounded, so a broken build fails
// rather than hangs).
type phaseLog struct {
	mu     sync.Mutex
	phases []entity.PatchPhase
	seen   chan entity.PatchPhase
	// hold, when set, holds a request at PatchChecked (after telling
	// holding) until it is closed and the request's client check says the
	// client has gone.
	hold    chan struct{}
	holding chan struct{}
}

func (l *phaseLog) holdAtChecked(ch chan struct{}) {
	l.mu.Lock()
	l.hold = ch
	l.mu.Unlock()
}

func newPhaseLog() *phaseLog {
	return &phaseLog{seen: make(chan entity.PatchPhase, 64), holding: make(chan struct{}, 1)}
}

func (l *phaseLog) hook(ctx context.Context, p entity.PatchPhase) {
	l.mu.Lock()
	hold := l.hold
	l.mu.Unlock()
	if hold != nil && p == entity.PatchChecked {
		l.holding <- struct{}{}
		<-hold
		await.Poll(await.Long, func() bool { return entity.ClientGone(ctx) })
	}
	l.mu.Lock()
	l.phases = append(l.phases, p)
	l.mu.Unlock()
	l.seen <- p
}

func (l *phaseLog) take() []entity.PatchPhase {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.phases
	l.phases = nil
	for len(l.seen) > 0 {
		<-l.seen
	}
	return p
}

func (l *phaseLog) wait(t *testing.T, want entity.PatchPhase) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case p := <-l.seen:
			if p == want {
				return
			}
		case <-deadline:
			t.Fatalf("phase %s never came; saw %v", want, l.take())
		}
	}
}

func phasesString(ps []entity.PatchPhase) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ",")
}

const patchSample = `{"name":"a","n":1,"tags":["x"],"tags2":["x"],"addr":{"city":"c","zip":"z","geo":{"lat":1.5,"lon":2.5}},"blob":"b","blob2":"b"}`

// patchEnv is an entity environment over engine whose merge patches report
// their phases to the returned log, with one entity of patchSample.
func patchEnv(t *testing.T, engine string) (*entityEnv, *phaseLog, string) {
	log := newPhaseLog()
	env := newEntityEnv(t, engine, entity.WithPatchHook(log.hook))
	env.lockedModel("A", "pt", 1, patchSample)
	id, _ := env.create("A", "pt", 1, patchSample)
	return env, log, id
}

func (e *entityEnv) patch(id string, body []byte) entityResp {
	e.t.Helper()
	return e.call("A", "PATCH", "/entity/JSON/"+id, body, "Content-Type", "application/merge-patch+json", "If-Match", "*")
}

// TestPatchMergeSemantics: RFC 7396 through the API on both engines —
// null deletes (at any depth), arrays replace whole, objects merge, a
// non-object patch replaces the document (which an entity then refuses),
// and a wide patch of deletes is a no-op that still commits.
func TestPatchMergeSemantics(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env, log, id := patchEnv(t, engine)
			steps := []struct{ patch, want string }{
				{`{"addr":{"zip":null,"geo":{"lat":null}}}`, `{"name":"a","n":1,"tags":["x"],"tags2":["x"],"addr":{"city":"c","geo":{"lon":2.5}},"blob":"b","blob2":"b"}`},
				{`{"tags":["y","z"],"n":2}`, `{"name":"a","n":2,"tags":["y","z"],"tags2":["x"],"addr":{"city":"c","geo":{"lon":2.5}},"blob":"b","blob2":"b"}`},
				{`{"addr":{"zip":"new","geo":{"lat":3.5}},"name":null}`, `{"n":2,"tags":["y","z"],"tags2":["x"],"addr":{"city":"c","geo":{"lon":2.5,"lat":3.5},"zip":"new"},"blob":"b","blob2":"b"}`},
				{`{}`, `{"n":2,"tags":["y","z"],"tags2":["x"],"addr":{"city":"c","geo":{"lon":2.5,"lat":3.5},"zip":"new"},"blob":"b","blob2":"b"}`},
			}
			for _, s := range steps {
				before := env.get("A", "/entity/"+id).Meta.TransactionID
				env.patch(id, []byte(s.patch)).ok(t)
				e := env.get("A", "/entity/"+id)
				if !jsonSame(t, e.Data, s.want) {
					t.Fatalf("after %s: %s, want %s", s.patch, e.Data, s.want)
				}
				if e.Meta.TransactionID == before {
					t.Fatalf("%s committed no new transaction", s.patch)
				}
			}
			want := make([]string, len(steps))
			for i := range want {
				want[i] = "checked,loaded,merged,commit"
			}
			if got := phasesString(log.take()); got != strings.Join(want, ",") {
				t.Fatalf("phases %s, want %s", got, strings.Join(want, ","))
			}
			// A non-object patch replaces the whole document: an entity
			// must stay an object.
			for _, p := range []string{`["a"]`, `"x"`, `null`, `1E700`} {
				env.patch(id, []byte(p)).problem(t, 400, "BAD_REQUEST")
			}
			// 40,000 deletes of absent members: linear, and a no-op.
			var b strings.Builder
			b.WriteString(`{"addr":{"city":"d"}`)
			for i := 0; i < 40000; i++ {
				fmt.Fprintf(&b, `,"gone%d":null`, i)
			}
			b.WriteString(`}`)
			env.patch(id, []byte(b.String())).ok(t)
			if e := env.get("A", "/entity/"+id); !jsonSame(t, e.Data, `{"n":2,"tags":["y","z"],"tags2":["x"],"addr":{"city":"d","geo":{"lon":2.5,"lat":3.5},"zip":"new"},"blob":"b","blob2":"b"}`) {
				t.Fatalf("after the wide patch: %s", e.Data)
			}
		})
	}
}

// jsonSame compares JSON texts as values (PostgreSQL's jsonb keeps no
// member order), numbers by their text.
func jsonSame(t *testing.T, got []byte, want string) bool {
	t.Helper()
	decode := func(b []byte) any {
		d := stdjson.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(got), decode([]byte(want)))
}

// TestPatchLimitsBeforeMerge: a patch nested past MaxDepth is refused
// with 400 naming the limit before the entity is even read (no phase
// runs), at any depth past it; at the limit it goes on. A merged document
// over MaxBytes is refused naming MaxBytes, with nothing written.
func TestPatchLimitsBeforeMerge(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env, log, id := patchEnv(t, engine)
			nest := func(d int) []byte {
				return []byte(strings.Repeat(`{"addr":`, d) + "1" + strings.Repeat("}", d))
			}
			for _, d := range []int{257, 1000, 10000, 100000} {
				props := env.patch(id, nest(d)).problem(t, 400, "BAD_REQUEST")
				if props["limit"] != "MaxDepth" || props["max"] != float64(256) {
					t.Fatalf("depth %d: properties %v", d, props)
				}
				if ps := log.take(); len(ps) != 0 {
					t.Fatalf("depth %d: refused after phases %v", d, ps)
				}
			}
			// 256 levels are within the limit: the patch is merged (and
			// then refused by the model, which has no such field).
			env.patch(id, nest(256)).problem(t, 400, "BAD_REQUEST")
			if got := phasesString(log.take()); got != "checked,loaded,merged" {
				t.Fatalf("depth 256: phases %s", got)
			}

			// 6 MB stored plus 5 MB patched is over the 10 MiB cap
			// (each within it, and within every per-value limit).
			list := func(n int) string {
				return `["` + strings.TrimSuffix(strings.Repeat(strings.Repeat("x", 100)+`","`, n), `","`) + `"]`
			}
			env.call("A", "PUT", "/entity/JSON/"+id, []byte(`{"tags":`+list(60000)+`}`)).ok(t)
			before := env.get("A", "/entity/"+id).Meta.TransactionID
			log.take()
			props := env.patch(id, []byte(`{"tags2":`+list(50000)+`}`)).problem(t, 400, "BAD_REQUEST")
			if props["limit"] != "MaxBytes" || props["max"] != float64(10<<20) {
				t.Fatalf("merged size: properties %v", props)
			}
			if got := phasesString(log.take()); got != "checked,loaded" {
				t.Fatalf("merged size: phases %s", got)
			}
			if after := env.get("A", "/entity/"+id).Meta.TransactionID; after != before {
				t.Fatal("a refused patch was written")
			}
		})
	}
}

// TestPatchStopsWhenClientLeaves: a client that sends a large PATCH and
// closes its connection while svc works on it makes the PATCH stop at the
// next check: the entity is not read, nothing is merged or written, the
// abandonment is reported and the entity keeps its revision. (That the
// merge itself polls the check is TestMergePatchStopsWhenAsked.) The same request from a client that
// stays commits, so the check is not what fails the request.
func TestPatchStopsWhenClientLeaves(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env, log, id := patchEnv(t, engine)
			u, err := url.Parse(env.base)
			if err != nil {
				t.Fatal(err)
			}
			// About 1.5 MB of members: the merge of it takes many
			// stop checks.
			var b strings.Builder
			b.WriteString(`{"addr":{"city":"left"}`)
			for i := 0; i < 100000; i++ {
				fmt.Fprintf(&b, `,"absent%d":null`, i)
			}
			b.WriteString(`}`)
			body := b.String()
			send := func(t *testing.T) net.Conn {
				c, err := net.Dial("tcp", u.Host)
				if err != nil {
					t.Fatal(err)
				}
				req := "PATCH " + u.Path + "/entity/JSON/" + id + " HTTP/1.1\r\nHost: " + u.Host +
					"\r\nAuthorization: Bearer A\r\nContent-Type: application/merge-patch+json\r\nIf-Match: *\r\nContent-Length: " +
					strconv.Itoa(len(body)) + "\r\n\r\n" + body
				if _, err := c.Write([]byte(req)); err != nil {
					t.Fatal(err)
				}
				return c
			}
			before := env.get("A", "/entity/"+id).Meta.TransactionID
			log.take()

			// The hook holds the request once its body is checked, until
			// the test has closed the connection and svc can see it.
			closed := make(chan struct{})
			log.holdAtChecked(closed)
			c := send(t)
			select {
			case <-log.holding:
			case <-time.After(60 * time.Second):
				t.Fatal("the PATCH never reached its first phase")
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			close(closed)
			log.wait(t, entity.PatchAbandoned)
			if got := phasesString(log.take()); got != "checked,abandoned" {
				t.Fatalf("phases %s, want checked,abandoned", got)
			}
			if after := env.get("A", "/entity/"+id).Meta.TransactionID; after != before {
				t.Fatal("the PATCH of a client that left was written")
			}

			// The same request from a client that waits is merged and
			// committed, over the same kind of connection.
			log.holdAtChecked(nil)
			c = send(t)
			defer c.Close()
			if err := c.SetReadDeadline(time.Now().Add(60 * time.Second)); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := phasesString(log.take()); got != "checked,loaded,merged,commit" {
				t.Fatalf("phases %s", got)
			}
			if e := env.get("A", "/entity/"+id); !strings.Contains(string(e.Data), `"city":"left"`) {
				t.Fatalf("not committed: %s", e.Data)
			}
		})
	}
}
