package main

import (
	"fmt"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// Search scenarios over model loadgensearch/1 holding searchEntities
// entities {"u":k,"g":k%100,"s":"name-k"}. Setup tops the model up to that
// count, so rerunning against the same server does not load again.

const (
	searchModel    = "loadgensearch/1"
	searchEntities = 100_000
)

func searchSetup(c *fasthttp.Client, base string) error {
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/model/import/JSON/SAMPLE_DATA/" + searchModel, `{"u":1,"g":1,"s":"x"}`},
		{"PUT", "/model/" + searchModel + "/lock", ""},
	} {
		st, body, err := entityCall(c, step.method, base+step.path, []byte(step.body))
		if err != nil {
			return err
		}
		if st != 200 && st != 409 {
			return fmt.Errorf("setup %s %s: %d %s", step.method, step.path, st, body)
		}
	}
	st, body, err := entityCall(c, "GET", base+"/entity/stats/"+searchModel, nil)
	if err != nil || st != 200 {
		return fmt.Errorf("counting entities: %d %s %v", st, body, err)
	}
	var have struct{ Count int }
	if err := json.Unmarshal(body, &have); err != nil {
		return fmt.Errorf("stats answer %s", body)
	}
	for k := have.Count; k < searchEntities; {
		docs := make([]string, 0, 1000)
		for ; len(docs) < 1000 && k < searchEntities; k++ {
			docs = append(docs, fmt.Sprintf(`{"u":%d,"g":%d,"s":"name-%d"}`, k, k%100, k))
		}
		st, body, err := entityCall(c, "POST", base+"/entity/JSON/"+searchModel+"?transactionWindow=1000", []byte("["+strings.Join(docs, ",")+"]"))
		if err != nil || st != 200 {
			return fmt.Errorf("loading entities: %d %.200s %v", st, body, err)
		}
	}
	return nil
}

func searchRequest(req *fasthttp.Request, base, cond string) {
	req.SetRequestURI(base + "/search/direct/" + searchModel)
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/json")
	req.SetBodyString(cond)
}

// searchScenarios adds the scenarios of this file to scenarios.
func searchScenarios(scenarios map[string]Scenario) {
	scenarios["search"] = Scenario{
		Describe: "POST {ctx}/search/direct/" + searchModel + ` with $.u EQUALS <n> (1 match of 100k; GIN-indexed on PostgreSQL, a scan on memory)`,
		Setup:    searchSetup,
		Build: func(req *fasthttp.Request, base string, worker int, seq uint64) {
			u := (uint64(worker)*7919 + seq) % searchEntities
			searchRequest(req, base, `{"type":"simple","jsonPath":"$.u","operatorType":"EQUALS","value":`+strconv.FormatUint(u, 10)+`}`)
		},
		OK: func(s int) bool { return s == 200 },
	}
	scenarios["search-group"] = Scenario{
		Describe: "POST {ctx}/search/direct/" + searchModel + ` with $.g EQUALS <n> (1000 matches of 100k, NDJSON)`,
		Setup:    searchSetup,
		Build: func(req *fasthttp.Request, base string, worker int, seq uint64) {
			searchRequest(req, base, `{"type":"simple","jsonPath":"$.g","operatorType":"EQUALS","value":`+strconv.FormatUint((uint64(worker)+seq)%100, 10)+`}`)
		},
		OK: func(s int) bool { return s == 200 },
	}
}
