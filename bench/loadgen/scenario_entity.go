package main

import (
	"fmt"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// Entity scenarios. Setup imports a sample into model loadgen/1 and locks
// it (both idempotent enough to rerun against the same server: an import
// into a locked model or a second lock is accepted).

const entityModelPath = "/entity/JSON/loadgen/1"

// entityDoc is a ~1 KB entity document.
func entityDoc(worker int, seq uint64) string {
	return fmt.Sprintf(`{"worker":%d,"seq":%d,"name":"customer","email":"c@example.com","active":true,"score":12.5,`+
		`"address":{"street":"%s","city":"Springfield","zip":"12345","country":"US"},`+
		`"tags":["alpha","beta","gamma"],"orders":[{"sku":"A-1","qty":2,"price":9.99},{"sku":"B-2","qty":1,"price":19.5}],`+
		`"notes":"%s"}`, worker, seq, strings.Repeat("x", 120), strings.Repeat("lorem ipsum ", 54))
}

func entitySetup(c *fasthttp.Client, base string) error {
	for _, step := range []struct {
		method, path, body string
		ok                 func(int) bool
	}{
		{"POST", "/model/import/JSON/SAMPLE_DATA/loadgen/1", entityDoc(0, 0), func(s int) bool { return s == 200 || s == 409 }},
		{"PUT", "/model/loadgen/1/lock", "", func(s int) bool { return s == 200 || s == 409 }},
	} {
		st, body, err := entityCall(c, step.method, base+step.path, []byte(step.body))
		if err != nil {
			return err
		}
		if !step.ok(st) {
			return fmt.Errorf("setup %s %s: %d %s", step.method, step.path, st, body)
		}
	}
	return nil
}

func entityCall(c *fasthttp.Client, method, uri string, body []byte) (int, []byte, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	req.Header.SetContentType("application/json")
	req.SetBody(body)
	setAuth(req)
	if err := c.Do(req, resp); err != nil {
		return 0, nil, err
	}
	return resp.StatusCode(), append([]byte(nil), resp.Body()...), nil
}

// createOne creates one entity and returns its id.
func createOne(c *fasthttp.Client, uri string, doc []byte) (string, error) {
	st, body, err := entityCall(c, "POST", uri, doc)
	if err != nil || st != 200 {
		return "", fmt.Errorf("creating the entity to read: %d %s %v", st, body, err)
	}
	var res []struct {
		EntityIDs []string `json:"entityIds"`
	}
	if err := json.Unmarshal(body, &res); err != nil || len(res) != 1 || len(res[0].EntityIDs) != 1 {
		return "", fmt.Errorf("create answer %s", body)
	}
	return res[0].EntityIDs[0], nil
}

// getEntityURI is the entity the get scenario reads, created by its Setup.
var getEntityURI string

// entityScenarios adds the scenarios of this file to scenarios.
func entityScenarios(scenarios map[string]Scenario) {
	scenarios["create"] = Scenario{
		Describe: "POST {ctx}" + entityModelPath + " (one ~1 KB entity per request; memory or PostgreSQL per the server)",
		Setup:    entitySetup,
		Build: func(req *fasthttp.Request, base string, worker int, seq uint64) {
			req.SetRequestURI(base + entityModelPath)
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			req.SetBodyString(entityDoc(worker, seq))
		},
		OK: func(s int) bool { return s == 200 },
	}
	var collection []byte
	scenarios["collection"] = Scenario{
		Describe: "POST {ctx}" + entityModelPath + "?transactionWindow=1000 (1000 x ~1 KB entities per request, one transaction)",
		Setup: func(c *fasthttp.Client, base string) error {
			docs := make([]string, 1000)
			for i := range docs {
				docs[i] = entityDoc(0, uint64(i))
			}
			collection = []byte("[" + strings.Join(docs, ",") + "]")
			return entitySetup(c, base)
		},
		Build: func(req *fasthttp.Request, base string, _ int, _ uint64) {
			req.SetRequestURI(base + entityModelPath + "?transactionWindow=1000")
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			req.SetBody(collection)
		},
		OK:         func(s int) bool { return s == 200 },
		PerRequest: 1000,
	}
	scenarios["get"] = Scenario{
		Describe: "GET {ctx}/entity/{id} (one ~1 KB entity, latest revision)",
		Setup: func(c *fasthttp.Client, base string) error {
			if err := entitySetup(c, base); err != nil {
				return err
			}
			id, err := createOne(c, base+entityModelPath, []byte(entityDoc(0, 0)))
			getEntityURI = base + "/entity/" + id
			return err
		},
		Build: func(req *fasthttp.Request, _ string, _ int, _ uint64) {
			req.SetRequestURI(getEntityURI)
			req.Header.SetMethod("GET")
		},
		OK: func(s int) bool { return s == 200 },
	}
}
