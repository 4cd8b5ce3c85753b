package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"svc/internal/testkeys"
	"svc/storage/pgtest"
)

// sweepEnv is the real binary in jwt mode with an admin token and one
// model, entity and message to aim at.
type sweepEnv struct {
	t      *testing.T
	base   string
	token  string
	values map[string]string // a valid value per path parameter name
}

func startSweepEnv(t *testing.T, engine string) *sweepEnv {
	t.Helper()
	bin := svcBinary(t)
	keyFile := testkeys.File(t, 5)
	httpPort, adminPort := freePort(t), freePort(t)
	env := []string{fmt.Sprintf("SVC_HTTP_PORT=%d", httpPort), fmt.Sprintf("SVC_ADMIN_PORT=%d", adminPort), fmt.Sprintf("SVC_GRPC_PORT=%d", freePort(t)),
		"SVC_SUPPRESS_BANNER=true", "SVC_IAM_MODE=jwt", "SVC_JWT_SIGNING_KEY_FILE=" + keyFile,
		"SVC_BOOTSTRAP_CLIENT_ID=boot", "SVC_BOOTSTRAP_CLIENT_SECRET=sweep-secret-of-more-than-32-characters",
		"SVC_IAM_TRUSTED_KEY_REGISTRATION_ENABLED=true",
		// Refused client authentications are part of the sweep: no 429s.
		"SVC_OAUTH_MAX_FAILURES_PER_CLIENT=0", "SVC_OAUTH_MAX_FAILURES_PER_ADDRESS=0"}
	if engine == "postgres" {
		env = append(env, "SVC_STORAGE_BACKEND=postgres", "SVC_POSTGRES_URL="+pgtest.New(t, "cmd_text"))
	}
	if engine == "sqlite" {
		env = append(env, "SVC_STORAGE_BACKEND=sqlite", "SVC_SQLITE_PATH="+filepath.Join(t.TempDir(), "svc.db"))
	}
	startServe(t, bin, adminPort, env...)
	e := &sweepEnv{t: t, base: fmt.Sprintf("http://127.0.0.1:%d/api", httpPort)}
	req, _ := http.NewRequest("POST", e.base+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("boot", "sweep-secret-of-more-than-32-characters")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tr)
	resp.Body.Close()
	if tr.AccessToken == "" {
		t.Fatalf("token: %d", resp.StatusCode)
	}
	e.token = tr.AccessToken

	// The fixtures: a locked model with one entity, a message.
	e.must("POST", "/model/import/JSON/SAMPLE_DATA/sweep/1", `{"name":"a","n":1,"tags":["x"]}`)
	e.must("PUT", "/model/sweep/1/lock", "")
	var created []struct {
		EntityIDs []string `json:"entityIds"`
	}
	json.Unmarshal([]byte(e.must("POST", "/entity/JSON/sweep/1", `{"name":"b","n":2,"tags":["y"]}`)), &created)
	var msg []struct {
		EntityIDs []string `json:"entityIds"`
	}
	json.Unmarshal([]byte(e.must("POST", "/message/new/sweep", `{"payload":{"a":1}}`)), &msg)
	if len(created) == 0 || len(created[0].EntityIDs) == 0 || len(msg) == 0 || len(msg[0].EntityIDs) == 0 {
		t.Fatal("fixtures: no entity or message id")
	}
	id := created[0].EntityIDs[0]
	e.values = map[string]string{
		"entityName": "sweep", "modelVersion": "1", "entityId": id, "format": "JSON", "converter": "SIMPLE_VIEW",
		"dataFormat": "JSON", "changeLevel": "STRUCTURAL", "transition": "t", "subject": "sweep",
		"messageId": msg[0].EntityIDs[0], "transactionId": id, "jobId": id, "schemaId": id, "entityModelId": id,
		"clientId": "boot", "keyId": "k", "id": id, "schemaName": "s",
	}
	return e
}

func (e *sweepEnv) do(method, path, contentType, body string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("If-Match", "*")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (e *sweepEnv) must(method, path, body string) string {
	e.t.Helper()
	st, b := e.do(method, path, "application/json", body)
	if st != 200 {
		e.t.Fatalf("%s %s: %d %s", method, path, st, b)
	}
	return b
}

// sweepOp is one operation of /openapi.json.
type sweepOp struct {
	method, path string
	query        []string
	form         bool // a form body (the OAuth endpoints)
	body         bool // a JSON (or other) body
	contentType  string
}

func (e *sweepEnv) operations() []sweepOp {
	e.t.Helper()
	resp, err := http.Get(strings.TrimSuffix(e.base, "/api") + "/openapi.json")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
			RequestBody *struct {
				Content map[string]any `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		e.t.Fatal(err)
	}
	var ops []sweepOp
	for path, methods := range doc.Paths {
		for method, op := range methods {
			o := sweepOp{method: strings.ToUpper(method), path: strings.TrimPrefix(path, "/api")}
			for _, p := range op.Parameters {
				if p.In == "query" {
					o.query = append(o.query, p.Name)
				}
			}
			if op.RequestBody != nil {
				for ct := range op.RequestBody.Content {
					switch {
					case strings.Contains(ct, "form-urlencoded"):
						o.form = true
					case strings.Contains(ct, "json") && (o.contentType == "" || strings.Contains(ct, "merge-patch")):
						o.body, o.contentType = true, ct
					}
				}
			}
			ops = append(ops, o)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	return ops
}

// fill puts the valid value of every path parameter into path, except
// bad (a parameter name) which gets badValue, already escaped.
func (e *sweepEnv) fill(path, bad, badValue string) string {
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			return path
		}
		j := strings.IndexByte(path[i:], '}') + i
		name := path[i+1 : j]
		v, ok := e.values[name]
		if !ok {
			v = "x"
		}
		if name == bad {
			v = badValue
		}
		path = path[:i] + v + path[j+1:]
	}
}

func pathParamNames(path string) []string {
	var names []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") {
			names = append(names, strings.Trim(seg, "{}"))
		}
	}
	return names
}

// TestOddTextSweep sends every operation of /openapi.json, on both
// engines, a NUL, an encoded lone surrogate and a byte that is not UTF-8
// in each path and query parameter and in its body (and a body naming a
// member twice): each answer is a 4xx, never a 500 and never the storage
// backstop's UNSTORABLE_TEXT (a check the request guard missed), and both
// engines answer alike.
func TestOddTextSweep(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the binary twice")
	}
	escaped := []string{"%00", "%ED%A0%80", "%FF"} // NUL, U+D800 as UTF-8, a byte that is not UTF-8
	bodies := []string{`{"name":"\u0000"}`, `{"name":"\ud800"}`, "{\"name\":\"\xff\"}", `{"name":"a","name":"b"}`,
		`[{"name":"\u0000"}]`, `{"payload":"{\"a\":1}","model":{"name":"a\u0000","version":1}}`}
	forms := []string{"grant_type=client_credentials&client_id=%00", "grant_type=client_credentials&client_id=%FF",
		"token=%ED%A0%80", "grant_type=%00"}
	results := map[string]map[string]int{}
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := startSweepEnv(t, engine)
			got := map[string]int{}
			results[engine] = got
			check := func(label string, status int, body string) {
				t.Helper()
				got[label] = status
				if status < 400 || status > 499 || strings.Contains(body, "UNSTORABLE_TEXT") {
					t.Errorf("%s: %d %s", label, status, body)
				}
			}
			ops := e.operations()
			if len(ops) < 90 {
				t.Fatalf("only %d operations in /openapi.json", len(ops))
			}
			for _, op := range ops {
				for _, name := range pathParamNames(op.path) {
					for _, v := range escaped {
						st, b := e.do(op.method, e.fill(op.path, name, v), op.contentType, "")
						check(op.method+" "+op.path+" {"+name+"}="+v, st, b)
					}
				}
				for _, q := range op.query {
					for _, v := range escaped {
						st, b := e.do(op.method, e.fill(op.path, "", "")+"?"+q+"="+v, op.contentType, "")
						check(op.method+" "+op.path+"?"+q+"="+v, st, b)
					}
				}
				p := e.fill(op.path, "", "")
				if op.body {
					for _, body := range bodies {
						st, b := e.do(op.method, p, op.contentType, body)
						check(op.method+" "+op.path+" "+body, st, b)
					}
				}
				if op.form {
					for _, body := range forms {
						st, b := e.do(op.method, p, "application/x-www-form-urlencoded", body)
						check(op.method+" "+op.path+" "+body, st, b)
					}
				}
			}
			t.Logf("%s: %d requests over %d operations", engine, len(got), len(ops))
		})
	}
	mem := results["memory"]
	for _, other := range []string{"sqlite", "postgres"} {
		got := results[other]
		if len(mem) == 0 || len(got) == 0 {
			continue
		}
		for k, st := range mem {
			if ost, ok := got[k]; ok && ost != st {
				t.Errorf("%s: memory %d, %s %d", k, st, other, ost)
			}
		}
	}
}

// TestDocumentEntryPointsRefuseDuplicatesAndOddText: at every place a
// document enters, on both engines, a member named twice at any depth is
// a 400 naming the key (I-JSON, RFC 7493), and text PostgreSQL cannot hold
// is a 400 naming where it is; nothing is stored.
func TestDocumentEntryPointsRefuseDuplicatesAndOddText(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the binary twice")
	}
	cond := func(value string) string {
		return `{"type":"simple","jsonPath":"$.name","operatorType":"EQUALS","value":` + value + `}`
	}
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := startSweepEnv(t, engine)
			id := e.values["entityId"]
			cases := []struct {
				name, method, path, ct, body string
				want                         string // a fragment of the problem body
			}{
				{"create", "POST", "/entity/JSON/sweep/1", "", `{"name":"a","n":1,"name":"b"}`, `"key":"name"`},
				{"create nested", "POST", "/entity/JSON/sweep/1", "", `{"name":"a","x":{"y":[{"z":1,"z":2}]}}`, `"field":"$.x.y[0].z"`},
				{"create array", "POST", "/entity/JSON/sweep/1", "", `[{"name":"a"},{"n":1,"n":2}]`, `"field":"$[1].n"`},
				{"create escaped duplicate", "POST", "/entity/JSON/sweep/1", "", `{"name":"a","\u006eame":"b"}`, `"key":"name"`},
				{"collection create", "POST", "/entity/JSON", "", `[{"model":{"name":"sweep","version":1},"payload":"{\"name\":\"a\",\"name\":\"b\"}"}]`, `"key":"name"`},
				{"collection create wrapper", "POST", "/entity/JSON", "", `[{"model":{"name":"sweep","version":1},"payload":"{}","payload":"{}"}]`, `"key":"payload"`},
				{"collection update", "PUT", "/entity/JSON", "", `[{"id":"` + id + `","payload":"{\"n\":1,\"n\":2}"}]`, `"key":"n"`},
				{"update", "PUT", "/entity/JSON/" + id, "", `{"name":"a","name":"b"}`, `"key":"name"`},
				{"patch", "PATCH", "/entity/JSON/" + id, "application/merge-patch+json", `{"tags":["z"],"tags":["w"]}`, `"key":"tags"`},
				{"ndjson stream", "POST", "/entity/ndjson/sweep/1", "application/x-ndjson", "{\"name\":\"a\"}\n{\"name\":\"a\",\"name\":\"b\"}\n", `"key":"name"`},
				{"message payload", "POST", "/message/new/sweep", "", `{"payload":{"a":1,"a":2}}`, `"key":"a"`},
				{"message metaData", "POST", "/message/new/sweep", "", `{"payload":1,"metaData":{"k":"v","k":"w"}}`, `"key":"k"`},
				{"model sample", "POST", "/model/import/JSON/SAMPLE_DATA/dup/1", "", `{"a":1,"b":{"c":1,"c":2}}`, `"key":"c"`},
				{"search direct", "POST", "/search/direct/sweep/1", "", `{"type":"simple","jsonPath":"$.name","jsonPath":"$.n","operatorType":"EQUALS","value":"a"}`, `"key":"jsonPath"`},
				{"search async", "POST", "/search/async/sweep/1", "", `{"type":"group","operator":"AND","conditions":[],"conditions":[]}`, `"key":"conditions"`},
				{"stats query", "POST", "/entity/stats/sweep/1/query", "", `{"groupBy":["$.name"],"groupBy":["$.n"]}`, `"key":"groupBy"`},
				{"delete condition", "DELETE", "/entity/sweep/1", "", `{"type":"simple","jsonPath":"$.name","operatorType":"EQUALS","value":"a","value":"b"}`, `"key":"value"`},
				{"workflow import", "POST", "/model/sweep/1/workflow/import", "", `{"importMode":"MERGE","workflows":[{"name":"w","name":"v"}]}`, `"key":"name"`},

				// Item 5: messages are valid JSON in and out.
				{"message payload not UTF-8", "POST", "/message/new/sweep", "", "{\"payload\":\"\xff\"}", `"field":"$.payload"`},
				{"message metaData not UTF-8", "POST", "/message/new/sweep", "", "{\"payload\":1,\"metaData\":{\"k\":\"\xfe\"}}", `"field":"$.metaData.k"`},
				{"message header not text", "POST", "/message/new/sweep", "", `{"payload":1}`, `"header":"X-Message-ID"`},
				{"search value not UTF-8", "POST", "/search/direct/sweep/1", "", cond("\"\xff\""), `"field":"$.value"`},
				{"search value NUL", "POST", "/search/direct/sweep/1", "", cond(`"a\u0000"`), `"field":"$.value"`},
				{"entity lone surrogate", "POST", "/entity/JSON/sweep/1", "", `{"name":"\ud800"}`, `"field":"$.name"`},
				{"patch NUL", "PATCH", "/entity/JSON/" + id, "application/merge-patch+json", `{"name":"\u0000"}`, `"field":"$.name"`},

				// Item 2: other text that reaches SQL.
				{"OIDC rolesClaim NUL", "POST", "/oauth/oidc/providers", "", `{"wellKnownConfigUri":"https://idp.invalid/.well-known/openid-configuration","rolesClaim":"r\u0000"}`, `"field":"$.rolesClaim"`},
				{"OIDC issuers NUL", "PATCH", "/oauth/oidc/providers/" + id, "", `{"issuers":["a\u0000"]}`, `"field":"$.issuers[0]"`},
				{"trusted key issuers NUL", "POST", "/oauth/keys/trusted", "", `{"keyId":"k1","jwk":{"kty":"RSA","n":"AQAB","e":"AQAB"},"issuers":["\u0000"]}`, `"field":"$.issuers[0]"`},
				{"audit eventType NUL", "GET", "/audit/entity/" + id + "?eventType=%00", "", ``, `"parameter":"eventType"`},
				{"model name NUL", "PUT", "/model/a%00b/1/lock", "", ``, `"parameter":"entityName"`},
				{"model name not UTF-8", "GET", "/model/export/SIMPLE_VIEW/%FF/1", "", ``, `"parameter":"entityName"`},
				{"list by model NUL", "GET", "/entity/a%00/1?pageSize=5", "", ``, `"parameter":"entityName"`},
			}
			for _, tc := range cases {
				ct := tc.ct
				if ct == "" {
					ct = "application/json"
				}
				req, _ := http.NewRequest(tc.method, e.base+tc.path, strings.NewReader(tc.body))
				req.Header.Set("Authorization", "Bearer "+e.token)
				req.Header.Set("Content-Type", ct)
				req.Header.Set("If-Match", "*")
				if tc.name == "message header not text" {
					req.Header.Set("X-Message-ID", "a\xffb")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 400 || !strings.Contains(string(b), tc.want) {
					t.Errorf("%s: %d %s, want 400 with %s", tc.name, resp.StatusCode, b, tc.want)
				}
			}
			// Nothing of the above was stored: the fixture entity is as it was.
			if st, b := e.do("GET", "/entity/"+id, "", ""); st != 200 || !strings.Contains(b, `"data":{"name":"b","n":2,"tags":["y"]}`) {
				t.Errorf("fixture entity after the refusals: %d %s", st, b)
			}
			if st, b := e.do("GET", "/entity/sweep/1", "", ""); st != 200 || strings.Count(b, `"type":"ENTITY"`) != 1 {
				t.Errorf("entities after the refusals: %d %s", st, b)
			}
		})
	}
}
