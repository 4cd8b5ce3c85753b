package fast

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/config"
)

type ndjsonAnswer struct {
	EntitiesCreated int `json:"entitiesCreated"`
	LinesRead       int `json:"linesRead"`
	Transactions    []struct {
		TransactionID string `json:"transactionId"`
		FirstLine     int    `json:"firstLine"`
		LastLine      int    `json:"lastLine"`
		Entities      int    `json:"entities"`
	} `json:"transactions"`
}

func ndjsonLines(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `{"n":%d,"s":"v%d"}`+"\n", i, i)
	}
	return b.String()
}

// stream posts body as a chunked request of unknown length, the way a
// client streams a file.
func (e *entityEnv) stream(tenant, path string, body io.Reader) entityResp {
	e.t.Helper()
	req, err := http.NewRequest("POST", e.base+path, io.NopCloser(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+tenant)
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return entityResp{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: b}
}

func TestNDJSONStream(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			// The listener's body cap is 1 MiB here rather than 64: the
			// streams below are not bound by it, and the other routes are
			// shown to keep it with a body just over it, not 64 MiB of one.
			const bodyCap = 1 << 20
			env := newEntityEnvConfig(t, engine, func(c *config.Config) { c.HTTPMaxBodyBytes = bodyCap })
			env.lockedModel("A", "item", 1, `{"n":1,"s":"x"}`)

			t.Run("commits every window as it reads", func(t *testing.T) {
				// Blank lines are skipped but counted, so line numbers
				// match the file's.
				body := ndjsonLines(0, 1200) + "\n  \n" + ndjsonLines(1200, 2500)
				var a ndjsonAnswer
				env.stream("A", "/entity/ndjson/item/1?transactionWindow=1000", strings.NewReader(body)).ok(t).decode(t, &a)
				if a.EntitiesCreated != 2500 || a.LinesRead != 2502 || len(a.Transactions) != 3 {
					t.Fatalf("answer %+v", a)
				}
				if tx := a.Transactions[1]; tx.FirstLine != 1001 || tx.LastLine != 2002 || tx.Entities != 1000 {
					t.Errorf("second transaction %+v: want lines 1001-2002 (two blank lines inside), 1000 entities", tx)
				}
				if got := env.count("A", "item", 1); got != 2500 {
					t.Fatalf("count %d, want 2500", got)
				}
			})

			t.Run("a bad line fails its chunk only", func(t *testing.T) {
				env.lockedModel("A", "bad", 1, `{"n":1,"s":"x"}`)
				body := ndjsonLines(0, 1502) + "{not json\n" + ndjsonLines(1503, 3000)
				p := env.stream("A", "/entity/ndjson/bad/1?transactionWindow=500", strings.NewReader(body)).problem(t, 400, "BAD_REQUEST")
				if p["line"] != float64(1503) || p["linesCommitted"] != float64(1500) || p["entitiesCreated"] != float64(1500) {
					t.Fatalf("properties %v", p)
				}
				if txs, _ := p["transactions"].([]any); len(txs) != 3 {
					t.Fatalf("transactions %v", p["transactions"])
				}
				if got := env.count("A", "bad", 1); got != 1500 {
					t.Fatalf("count %d, want the 1500 lines before the bad line's chunk", got)
				}
			})

			t.Run("a refused document names its own line", func(t *testing.T) {
				// Issue 26: the line was the chunk's first (1 for a bad
				// third line), in the problem and so in svc import.
				env.lockedModel("A", "bad3", 1, `{"n":1,"s":"x"}`)
				body := "{\"n\":1,\"s\":\"a\"}\n\n{\"n\":\"three\",\"s\":\"c\"}\n{\"n\":4,\"s\":\"d\"}\n"
				r := env.stream("A", "/entity/ndjson/bad3/1?transactionWindow=10", strings.NewReader(body))
				if r.status != 400 {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				var pr struct {
					Detail     string         `json:"detail"`
					Properties map[string]any `json:"properties"`
				}
				if err := json.Unmarshal(r.body, &pr); err != nil {
					t.Fatal(err)
				}
				if pr.Properties["line"] != float64(3) || !strings.Contains(pr.Detail, "line 3: ") || pr.Properties["entitiesCreated"] != float64(0) {
					t.Fatalf("problem %s, want line 3", r.body)
				}
			})

			t.Run("model rules of collection create", func(t *testing.T) {
				env.call("A", "POST", "/model/import/JSON/SAMPLE_DATA/open/1", []byte(`{"n":1}`)).ok(t)
				env.stream("A", "/entity/ndjson/open/1", strings.NewReader(`{"n":2}`+"\n")).problem(t, 409, "MODEL_NOT_LOCKED")
				env.stream("A", "/entity/ndjson/none/1", strings.NewReader(`{"n":2}`+"\n")).problem(t, 404, "MODEL_NOT_FOUND")
				env.stream("B", "/entity/ndjson/item/1", strings.NewReader(`{"n":2}`+"\n")).problem(t, 404, "MODEL_NOT_FOUND")
				env.stream("A", "/entity/ndjson/item/1?transactionWindow=0", strings.NewReader(`{"n":2}`+"\n")).problem(t, 400, "BAD_REQUEST")
				env.stream("A", "/entity/ndjson/item/1", strings.NewReader(`[{"n":2}]`+"\n")).problem(t, 400, "BAD_REQUEST")
			})

			t.Run("workflows run on every document", func(t *testing.T) {
				env := newAuditEnv(t, engine) // the entity service with the workflow engine
				env.lockedModel("A", "flowed", 1, `{"n":1}`)
				wf := `{"version":"1.3","name":"flow","initialState":"NEW","states":{` +
					`"NEW":{"transitions":[{"name":"settle","next":"SMALL","manual":false,"criterion":{"type":"simple","jsonPath":"$.n","operatorType":"LESS_OR_EQUAL","value":5}},` +
					`{"name":"promote","next":"BIG","manual":false,"criterion":{"type":"simple","jsonPath":"$.n","operatorType":"GREATER_THAN","value":5}}]},` +
					`"BIG":{},"SMALL":{}}}`
				env.call("A", "POST", "/model/flowed/1/workflow/import", []byte(`{"importMode":"REPLACE","workflows":[`+wf+`]}`)).ok(t)
				env.stream("A", "/entity/ndjson/flowed/1?transactionWindow=3", strings.NewReader("{\"n\":1}\n{\"n\":9}\n{\"n\":5}\n{\"n\":6}\n")).ok(t)
				lines, _ := env.export(t, "A", "/entity/ndjson/flowed/1")
				states := map[string]int{}
				for _, l := range lines {
					var e envelope
					json.Unmarshal(l, &e)
					states[e.Meta.State]++
				}
				if states["SMALL"] != 2 || states["BIG"] != 2 {
					t.Fatalf("states after the workflow: %v, want 2 SMALL and 2 BIG", states)
				}
			})

			t.Run("export streams every entity as of one instant", func(t *testing.T) {
				env.lockedModel("A", "exp", 1, `{"n":1,"s":"x"}`)
				var a ndjsonAnswer
				env.stream("A", "/entity/ndjson/exp/1", strings.NewReader(ndjsonLines(0, 300))).ok(t).decode(t, &a)
				mid := time.Now().UTC()
				env.stream("A", "/entity/ndjson/exp/1", strings.NewReader(ndjsonLines(300, 350))).ok(t)

				lines, at := env.export(t, "A", "/entity/ndjson/exp/1")
				if len(lines) != 350 || at == "" {
					t.Fatalf("%d lines (want 350), X-Point-In-Time %q", len(lines), at)
				}
				seen := map[string]bool{}
				for _, l := range lines {
					var e envelope
					if err := json.Unmarshal(l, &e); err != nil || e.Type != "ENTITY" || e.Meta.ID == "" {
						t.Fatalf("line %s: %v", l, err)
					}
					if seen[e.Meta.ID] {
						t.Fatalf("entity %s twice", e.Meta.ID)
					}
					seen[e.Meta.ID] = true
				}
				before, _ := env.export(t, "A", "/entity/ndjson/exp/1?pointInTime="+url.QueryEscape(mid.Format(time.RFC3339Nano)))
				if len(before) != 300 {
					t.Errorf("as of the instant between the two streams: %d lines, want 300", len(before))
				}
				cond := `{"type":"simple","jsonPath":"$.n","operatorType":"LESS_THAN","value":10}`
				few, _ := env.export(t, "A", "/entity/ndjson/exp/1?condition="+url.QueryEscape(cond))
				if len(few) != 10 {
					t.Errorf("condition n < 10: %d lines, want 10", len(few))
				}
				r := env.call("A", "GET", "/entity/ndjson/exp/1?condition="+url.QueryEscape(`{"type":"simple","jsonPath":"n"}`), nil)
				if r.status != 400 {
					t.Errorf("bad condition: %d %s", r.status, r.body)
				}
				env.call("B", "GET", "/entity/ndjson/exp/1", nil).problem(t, 404, "MODEL_NOT_FOUND")
			})

			t.Run("other routes keep the body limit", func(t *testing.T) {
				// A chunked body over the limit is refused before any
				// handler reads it; a chunked body within it is served.
				big := io.MultiReader(strings.NewReader(`[`), &zeroes{n: bodyCap + 10})
				r := env.stream("A", "/entity/JSON/item/1", big)
				if r.status != 413 || r.ctype != "application/problem+json" {
					t.Fatalf("oversized chunked body: %d %s %.200s", r.status, r.ctype, r.body)
				}
				var res []txResult
				env.stream("A", "/entity/JSON/item/1", strings.NewReader(`[{"n":7,"s":"x"},{"n":8,"s":"y"}]`)).ok(t).decode(t, &res)
				if len(res) != 1 || len(res[0].EntityIDs) != 2 {
					t.Fatalf("chunked collection create: %+v", res)
				}
			})
		})
	}
}

// zeroes is n spaces: a large body without a large allocation.
type zeroes struct{ n int }

// spaceBlock is what zeroes copies from: one copy per read instead of a
// store per byte, which -race instrumented one by one.
var spaceBlock = bytes.Repeat([]byte{' '}, 64<<10)

func (z *zeroes) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), z.n)], spaceBlock)
	z.n -= k
	return k, nil
}

// export reads an NDJSON export and returns its lines and the instant it
// was read at; an error line fails the test.
func (e *entityEnv) export(t *testing.T, tenant, path string) ([][]byte, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+tenant)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("export %s: %d %s %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var lines [][]byte
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := bytes.Clone(sc.Bytes())
		if bytes.HasPrefix(l, []byte(`{"error"`)) {
			t.Fatalf("export ended with %s", l)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines, resp.Header.Get("X-Point-In-Time")
}
