package main

import (
	"fmt"
	"sync"

	"github.com/valyala/fasthttp"

	"svc/bench/orderdoc"
)

// Order scenarios: the realistic ~1 KB order document of bench/orderdoc,
// values varying per request. orders/1 is locked as sampled; varied/1 is
// locked at change level STRUCTURAL so the growing documents extend it.

// orderSetup samples the first 20 orders (a whole-number amount alone
// would type it INTEGER), locks the model and sets its change level.
func orderSetup(model, changeLevel string) func(c *fasthttp.Client, base string) error {
	return func(c *fasthttp.Client, base string) error {
		type step struct {
			method, path string
			body         []byte
		}
		var steps []step
		for i := 0; i < 20; i++ {
			steps = append(steps, step{"POST", "/model/import/JSON/SAMPLE_DATA/" + model + "/1", orderdoc.Append(nil, i)})
		}
		steps = append(steps, step{"PUT", "/model/" + model + "/1/lock", nil})
		if changeLevel != "" {
			steps = append(steps, step{"POST", "/model/" + model + "/1/changeLevel/" + changeLevel, nil})
		}
		for _, s := range steps {
			st, body, err := entityCall(c, s.method, base+s.path, s.body)
			if err != nil {
				return err
			}
			if st != 200 && st != 409 {
				return fmt.Errorf("setup %s %s: %d %s", s.method, s.path, st, body)
			}
		}
		return nil
	}
}

// docNumber gives every request of a run its own document numbers.
func docNumber(worker int, seq uint64, per int) int {
	return int(seq)*per*64 + worker*per
}

// orderScenarios adds the scenarios of this file to scenarios.
func orderScenarios(scenarios map[string]Scenario) {
	scenarios["order-create"] = Scenario{
		Describe: "POST {ctx}/entity/JSON/orders/1 (one ~1 KB order per request, values varying)",
		Setup:    orderSetup("orders", ""),
		Build: func(req *fasthttp.Request, base string, worker int, seq uint64) {
			req.SetRequestURI(base + "/entity/JSON/orders/1")
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			setBody(req, func(b []byte) []byte { return orderdoc.Append(b, docNumber(worker, seq, 1)) })
		},
		OK: func(s int) bool { return s == 200 },
	}
	scenarios["order-collection"] = Scenario{
		Describe: "POST {ctx}/entity/JSON/orders/1?transactionWindow=1000 (1000 ~1 KB orders per request, one transaction)",
		Setup:    orderSetup("orders", ""),
		Build: func(req *fasthttp.Request, base string, worker int, seq uint64) {
			req.SetRequestURI(base + "/entity/JSON/orders/1?transactionWindow=1000")
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			setBody(req, func(b []byte) []byte { return orderArray(b, docNumber(worker, seq, 1000), 1000, orderdoc.Append) })
		},
		OK:         func(s int) bool { return s == 200 },
		PerRequest: 1000,
	}
	scenarios["order-varied"] = Scenario{
		Describe: "POST {ctx}/entity/JSON/varied/1?transactionWindow=100 (100 orders per request whose extra fields keep growing the model)",
		Setup:    orderSetup("varied", "STRUCTURAL"),
		Build: func(req *fasthttp.Request, base string, worker int, seq uint64) {
			req.SetRequestURI(base + "/entity/JSON/varied/1?transactionWindow=100")
			req.Header.SetMethod("POST")
			req.Header.SetContentType("application/json")
			setBody(req, func(b []byte) []byte { return orderArray(b, docNumber(worker, seq, 100), 100, orderdoc.AppendVaried) })
		},
		OK:         func(s int) bool { return s == 200 },
		PerRequest: 100,
	}
	var orderURI string
	scenarios["order-get"] = Scenario{
		Describe: "GET {ctx}/entity/{id} (one ~1 KB order, latest revision)",
		Setup: func(c *fasthttp.Client, base string) error {
			if err := orderSetup("orders", "")(c, base); err != nil {
				return err
			}
			id, err := createOne(c, base+"/entity/JSON/orders/1", orderdoc.Append(nil, 7))
			orderURI = base + "/entity/" + id
			return err
		},
		Build: func(req *fasthttp.Request, _ string, _ int, _ uint64) {
			req.SetRequestURI(orderURI)
			req.Header.SetMethod("GET")
		},
		OK: func(s int) bool { return s == 200 },
	}
	scenarios["model-list"] = Scenario{
		Describe: "GET {ctx}/model/ (the tenant's models; setup makes orders/1)",
		Setup:    orderSetup("orders", ""),
		Build: func(req *fasthttp.Request, base string, _ int, _ uint64) {
			req.SetRequestURI(base + "/model/")
			req.Header.SetMethod("GET")
		},
		OK: func(s int) bool { return s == 200 },
	}
	scenarios["order-export"] = Scenario{
		Describe: "GET {ctx}/model/export/SIMPLE_VIEW/orders/1 (the order model; run with -c 1 for the sequential latency)",
		Setup:    orderSetup("orders", ""),
		Build: func(req *fasthttp.Request, base string, _ int, _ uint64) {
			req.SetRequestURI(base + "/model/export/SIMPLE_VIEW/orders/1")
			req.Header.SetMethod("GET")
		},
		OK: func(s int) bool { return s == 200 },
	}
}

func orderArray(b []byte, first, n int, doc func([]byte, int) []byte) []byte {
	b = append(b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = doc(b, first+i)
	}
	return append(b, ']')
}

// bodies are scratch buffers for request bodies; SetBody copies.
var bodies = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func setBody(req *fasthttp.Request, fill func([]byte) []byte) {
	bp := bodies.Get().(*[]byte)
	*bp = fill((*bp)[:0])
	req.SetBody(*bp)
	bodies.Put(bp)
}
