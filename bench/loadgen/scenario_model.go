package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// modelSample is a ~1 KB sample: scalars, a nested object, an array of
// objects.
func modelSample() []byte {
	var sb strings.Builder
	sb.WriteString(`{`)
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&sb, `"field%02d":"value number %d",`, i, i)
	}
	sb.WriteString(`"n":12345,"ok":true,"at":"2024-06-20T10:15:30Z","addr":{"city":"Zurich","zip":"8000"},`)
	sb.WriteString(`"items":[{"sku":"A-1","qty":2,"price":9.95},{"sku":"B-2","qty":1,"price":19.5}]}`)
	return []byte(sb.String())
}

func importModelSample(c *fasthttp.Client, base string) error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(base + "/model/import/JSON/SAMPLE_DATA/loadgen/1")
	req.Header.SetMethod("POST")
	req.SetBody(modelSample())
	setAuth(req)
	if err := c.DoTimeout(req, resp, 10*time.Second); err != nil {
		return err
	}
	if resp.StatusCode() != 200 {
		return fmt.Errorf("import: %d %s", resp.StatusCode(), resp.Body())
	}
	return nil
}

// modelScenarios adds the scenarios of this file to scenarios.
func modelScenarios(scenarios map[string]Scenario) {
	sample := modelSample()
	scenarios["model-export"] = Scenario{
		Describe: "GET {ctx}/model/export/SIMPLE_VIEW/loadgen/1 (model of a 1 KB sample)",
		Setup:    importModelSample,
		Build: func(req *fasthttp.Request, base string, _ int, _ uint64) {
			req.SetRequestURI(base + "/model/export/SIMPLE_VIEW/loadgen/1")
			req.Header.SetMethod("GET")
		},
		OK: func(s int) bool { return s == 200 },
	}
	scenarios["model-import"] = Scenario{
		Describe: "POST {ctx}/model/import/JSON/SAMPLE_DATA/loadgen/1 (1 KB sample the model already holds)",
		Setup:    importModelSample,
		Build: func(req *fasthttp.Request, base string, _ int, _ uint64) {
			req.SetRequestURI(base + "/model/import/JSON/SAMPLE_DATA/loadgen/1")
			req.Header.SetMethod("POST")
			req.SetBodyRaw(sample)
		},
		OK: func(s int) bool { return s == 200 },
	}
}
