package fast

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/compute"
	"svc/compute/member"
	"svc/iam"
	"svc/predicate"
	"svc/storage"
)

// fnMember is a real compute member over loopback gRPC that answers
// function conditions from the entity's data: even (n is even), big
// (n > 5), always, never, boom (handler error) and slow (answers after
// 300 ms). It records every request it gets.
type fnMember struct {
	mu    sync.Mutex
	calls []*member.Call
}

func fnVerdict(name string, data []byte) (bool, error) {
	var d struct{ N int }
	if err := json.Unmarshal(data, &d); err != nil {
		return false, err
	}
	switch name {
	case "even":
		return d.N%2 == 0, nil
	case "big":
		return d.N > 5, nil
	case "always":
		return true, nil
	case "never":
		return false, nil
	}
	return false, errors.New("no such function " + name)
}

func (m *fnMember) criteria(_ context.Context, c *member.Call) (bool, string, error) {
	m.mu.Lock()
	m.calls = append(m.calls, c)
	m.mu.Unlock()
	switch c.Request.CriteriaName {
	case "boom":
		return false, "", errors.New("boom handler failed")
	case "slow":
		time.Sleep(300 * time.Millisecond)
		return true, "", nil
	}
	if c.Request.Payload == nil {
		return false, "", errors.New("no payload attached")
	}
	ok, err := fnVerdict(c.Request.CriteriaName, c.Request.Payload.Data)
	return ok, "", err
}

func (m *fnMember) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

func (m *fnMember) last() *member.Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[len(m.calls)-1]
}

// newFunctionEnv is a search environment whose search service dispatches
// function conditions to a compute server on loopback, with a member of
// tenant F joined under tag "calc".
func newFunctionEnv(t testing.TB, engine string) (*searchEnv, *fnMember, string) {
	t.Helper()
	env := newSearchEnv(t, engine, nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := compute.New(compute.Config{}, compute.MockVerifier{Principal: &iam.Principal{Kind: "service", UserID: "m-F",
		TenantID: "F", Roles: []string{iam.RoleM2M}}}, slog.New(slog.DiscardHandler))
	srv.Start(lis, nil)
	t.Cleanup(srv.Stop)
	env.search.SetDispatcher(srv)
	fm := &fnMember{}
	m, err := member.Connect(context.Background(), member.Config{Endpoint: lis.Addr().String(), Tags: []string{"calc"},
		Log: slog.New(slog.DiscardHandler)}, member.Handlers{Criteria: fm.criteria})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return env, fm, lis.Addr().String()
}

func fnLeaf(name string) string {
	return `{"type":"function","function":{"name":"` + name + `","config":{"calculationNodesTags":"calc","responseTimeoutMs":20000}}}`
}

func group(op string, conds ...string) string {
	b := `{"type":"group","operator":"` + op + `","conditions":[`
	for i, c := range conds {
		if i > 0 {
			b += ","
		}
		b += c
	}
	return b + "]}"
}

func simple(path, op string, v any) string {
	raw, _ := json.Marshal(v)
	return `{"type":"simple","jsonPath":"` + path + `","operatorType":"` + op + `","value":` + string(raw) + `}`
}

// seedFunctions makes model fn/1 in tenant F with 12 entities n = 0..11.
func seedFunctions(env *searchEnv) {
	env.lockedModel("F", "fn", 1, `{"n":1,"color":"red","size":2}`)
	colors := []string{"red", "green", "blue"}
	for n := 0; n < 12; n++ {
		env.create("F", "fn", 1, fmt.Sprintf(`{"n":%d,"color":%q,"size":%d}`, n, colors[n%3], n*3%7))
	}
}

// goFunctions answers function conditions in process with the member's
// own rule, for the expected results.
type goFunctions struct{ data []byte }

func (g *goFunctions) CallFunction(f *predicate.Function) (bool, error) {
	return fnVerdict(f.Name, g.data)
}

// expected evaluates cond in Go over every live entity of fn/1 and returns
// the matching ids, sorted.
func expected(t testing.TB, env *searchEnv, cond string) []string {
	t.Helper()
	ctx := context.Background()
	key := storage.ModelKey{Name: "fn", Version: 1}
	c, err := env.search.Condition(ctx, "F", key, []byte(cond))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	err = env.ents.Scan(ctx, "F", key, nil, func(e *storage.Entity) error {
		m := predicate.Meta{ID: uuid.UUID(e.ID).String(), State: e.State, TransactionID: uuid.UUID(e.TxID).String(),
			CreationDate: e.CreatedAt, LastUpdateTime: e.UpdatedAt, TransitionForLatestSave: e.Transition}
		ok, err := c.Eval(e.Data, &m, &goFunctions{data: e.Data})
		if err != nil {
			return err
		}
		if ok {
			ids = append(ids, uuid.UUID(e.ID).String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	return ids
}

func idsOf(es []envelope) []string {
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.Meta.ID
	}
	sort.Strings(ids)
	return ids
}

var functionConditions = []string{
	fnLeaf("even"),
	group("AND", simple("$.color", "EQUALS", "red"), fnLeaf("even")),
	group("OR", simple("$.size", "GREATER_THAN", 3), fnLeaf("even")),
	group("NOT", fnLeaf("even")),
	group("NOT", group("AND", fnLeaf("even"), simple("$.color", "EQUALS", "blue"))),
	group("AND", group("OR", fnLeaf("even"), simple("$.color", "EQUALS", "green")), group("NOT", simple("$.size", "LESS_THAN", 2))),
	group("AND", fnLeaf("even"), fnLeaf("big")),
	group("OR", group("NOT", fnLeaf("big")), group("AND", simple("$.color", "EQUALS", "blue"), fnLeaf("even"))),
	fnLeaf("always"),
	fnLeaf("never"),
}

func TestSearchFunctionConditions(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env, fm, _ := newFunctionEnv(t, engine)
			seedFunctions(env)
			t.Run("direct", func(t *testing.T) { functionDirect(t, env.with(t), fm) })
			t.Run("async", func(t *testing.T) { functionAsync(t, env.with(t)) })
			t.Run("stats", func(t *testing.T) { functionStats(t, env.with(t)) })
			t.Run("failures", func(t *testing.T) { functionFailures(t, env.with(t)) })
			t.Run("delete", func(t *testing.T) { functionDelete(t, env.with(t)) })
		})
	}
}

func functionDirect(t *testing.T, env *searchEnv, fm *fnMember) {
	for _, cond := range functionConditions {
		want := expected(t, env, cond)
		got := idsOf(ndjson(t, env.call("F", "POST", "/search/direct/fn/1", []byte(cond))))
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got  %v\n want %v", cond, got, want)
		}
	}
	if n := len(expected(t, env, fnLeaf("always"))); n != 12 {
		t.Fatalf("always selects %d of 12", n)
	}

	// The request a member gets: criteria named after the function, target
	// NA, the entity attached, the searching principal as the caller.
	before := fm.count()
	res := ndjson(t, env.call("F", "POST", "/search/direct/fn/1", []byte(group("AND", simple("$.n", "EQUALS", 4), fnLeaf("even")))))
	if len(res) != 1 || fm.count() != before+1 {
		t.Fatalf("one candidate should cost one call: %d results, %d calls", len(res), fm.count()-before)
	}
	c := fm.last()
	r := c.Request
	if r.CriteriaName != "even" || r.CriteriaID != "even" || r.Target != "NA" || r.EntityID != res[0].Meta.ID ||
		r.Payload == nil || r.Payload.Meta == nil || r.Payload.Meta.ModelKey.Name != "fn" || r.Payload.Meta.ModelKey.Version != 1 ||
		r.Payload.Meta.State != "CREATED" || c.AuthType != "user" || c.AuthID != "u-F" {
		t.Errorf("criteria request %+v attrs %s/%s", r, c.AuthType, c.AuthID)
	}
	// A simple leaf that rules every entity out leaves nothing to ask.
	before = fm.count()
	ndjson(t, env.call("F", "POST", "/search/direct/fn/1", []byte(group("AND", simple("$.color", "EQUALS", "none"), fnLeaf("even")))))
	if fm.count() != before {
		t.Errorf("%d member calls for no candidate", fm.count()-before)
	}

	// Sort and limit apply to the re-checked result: 6 even entities.
	evens := ndjson(t, env.call("F", "POST", "/search/direct/fn/1?sort=n:desc&limit=6", []byte(fnLeaf("even"))))
	var ns []int
	for _, e := range evens {
		var d struct{ N int }
		json.Unmarshal(e.Data, &d)
		ns = append(ns, d.N)
	}
	if fmt.Sprint(ns) != "[10 8 6 4 2 0]" {
		t.Errorf("sorted evens %v", ns)
	}
	env.call("F", "POST", "/search/direct/fn/1?limit=5", []byte(fnLeaf("even"))).problem(t, 400, "SEARCH_RESULT_LIMIT")

	// pointInTime: entity n=0 becomes n=1 (odd); as of before, it is even.
	zero := evens[len(evens)-1].Meta.ID
	at := time.Now().UTC()
	time.Sleep(5 * time.Millisecond)
	env.call("F", "PUT", "/entity/JSON/"+zero, []byte(`{"n":1,"color":"red","size":0}`)).ok(t)
	now := idsOf(ndjson(t, env.call("F", "POST", "/search/direct/fn/1", []byte(fnLeaf("even")))))
	then := idsOf(ndjson(t, env.call("F", "POST", "/search/direct/fn/1?pointInTime="+url.QueryEscape(at.Format(time.RFC3339Nano)), []byte(fnLeaf("even")))))
	if len(now) != 5 || slices.Contains(now, zero) || len(then) != 6 || !slices.Contains(then, zero) {
		t.Errorf("pointInTime: now %v, then %v (changed %s)", now, then, zero)
	}
	env.call("F", "PUT", "/entity/JSON/"+zero, []byte(`{"n":0,"color":"red","size":0}`)).ok(t)
}

func functionAsync(t *testing.T, env *searchEnv) {
	cond := group("OR", simple("$.size", "GREATER_THAN", 4), group("NOT", fnLeaf("even")))
	want := expected(t, env, cond)
	var id string
	env.call("F", "POST", "/search/async/fn/1", []byte(cond)).ok(t).decode(t, &id)
	st := env.waitJob("F", id)
	if st["searchJobStatus"] != "SUCCESSFUL" || st["entitiesCount"] != float64(len(want)) {
		t.Fatalf("job %v, want %d", st, len(want))
	}
	var page struct{ Content []envelope }
	env.call("F", "GET", "/search/async/"+id+"?pageSize=100", nil).ok(t).decode(t, &page)
	if got := idsOf(page.Content); !slices.Equal(got, want) {
		t.Errorf("async:\n got  %v\n want %v", got, want)
	}

	// A member failure fails the job and records why.
	for fn, code := range map[string]string{"boom": "FUNCTION_CONDITION_FAILED", "nobody": "NO_COMPUTE_MEMBER_FOR_TAG"} {
		leaf := fnLeaf(fn)
		if fn == "nobody" {
			leaf = `{"type":"function","function":{"name":"even","config":{"calculationNodesTags":"nobody"}}}`
		}
		env.call("F", "POST", "/search/async/fn/1", []byte(leaf)).ok(t).decode(t, &id)
		if st := env.waitJob("F", id); st["searchJobStatus"] != "FAILED" {
			t.Fatalf("%s: job %v", fn, st)
		}
		j, err := env.jobs.GetJob(context.Background(), "F", uuid.MustParse(id))
		if err != nil {
			t.Fatal(err)
		}
		if len(j.Error) < len(code) || j.Error[:len(code)] != code {
			t.Errorf("%s: job error %q, want %s", fn, j.Error, code)
		}
	}
}

type bucket struct {
	GroupKey []struct {
		Path  string  `json:"path"`
		Value *string `json:"value"`
	} `json:"groupKey"`
	Count int `json:"count"`
}

func functionStats(t *testing.T, env *searchEnv) {
	for _, cond := range functionConditions[:8] {
		want := map[string]int{}
		for _, id := range expected(t, env, cond) {
			var d struct{ Color string }
			json.Unmarshal(env.get("F", "/entity/"+id).Data, &d)
			want[d.Color]++
		}
		var buckets []bucket
		env.call("F", "POST", "/entity/stats/fn/1/query", []byte(`{"groupBy":["$.color"],"condition":`+cond+`}`)).ok(t).decode(t, &buckets)
		got := map[string]int{}
		for _, b := range buckets {
			got[*b.GroupKey[0].Value] = b.Count
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("stats %s: got %v, want %v", cond, got, want)
		}
	}
	env.call("F", "POST", "/entity/stats/fn/1/query", []byte(`{"groupBy":["$.color"],"condition":{"type":"nope"}}`)).
		problem(t, 400, "INVALID_CONDITION")
	env.call("F", "POST", "/entity/stats/fn/1/query", []byte(`{"groupBy":["$.color"],"condition":`+fnLeaf("boom")+`}`)).
		problem(t, 400, "FUNCTION_CONDITION_FAILED")
}

// functionFailures: no member for the tags is 503 NO_COMPUTE_MEMBER_FOR_TAG
// and a member too slow 503 DISPATCH_TIMEOUT, both retryable; a member
// reporting failure is 400 FUNCTION_CONDITION_FAILED.
func functionFailures(t *testing.T, env *searchEnv) {
	nobody := `{"type":"function","function":{"name":"even","config":{"calculationNodesTags":"nobody"}}}`
	slow := `{"type":"function","function":{"name":"slow","config":{"calculationNodesTags":"calc","responseTimeoutMs":50}}}`
	for _, c := range []struct {
		cond, code string
		status     int
		retryable  bool
	}{
		{nobody, "NO_COMPUTE_MEMBER_FOR_TAG", 503, true},
		{group("OR", simple("$.n", "EQUALS", 3), nobody), "NO_COMPUTE_MEMBER_FOR_TAG", 503, true},
		{slow, "DISPATCH_TIMEOUT", 503, true},
		{fnLeaf("boom"), "FUNCTION_CONDITION_FAILED", 400, false},
		{group("NOT", fnLeaf("boom")), "FUNCTION_CONDITION_FAILED", 400, false},
	} {
		p := env.call("F", "POST", "/search/direct/fn/1", []byte(c.cond)).problem(t, c.status, c.code)
		if p["retryable"] != c.retryable {
			t.Errorf("%s: retryable %v", c.code, p["retryable"])
		}
	}
	p := env.call("F", "POST", "/entity/stats/fn/1/query", []byte(`{"groupBy":["$.color"],"condition":`+nobody+`}`)).
		problem(t, 503, "NO_COMPUTE_MEMBER_FOR_TAG")
	if p["retryable"] != true {
		t.Errorf("stats: retryable %v", p["retryable"])
	}
	// attachEntity false sends no payload (this member then fails).
	env.call("F", "POST", "/search/direct/fn/1", []byte(`{"type":"function","function":{"name":"even","config":{"calculationNodesTags":"calc","attachEntity":false}}}`)).
		problem(t, 400, "FUNCTION_CONDITION_FAILED")
	// A malformed function config is the request's fault, found before
	// any member is asked.
	env.call("F", "POST", "/search/direct/fn/1", []byte(`{"type":"function","function":{"name":"even","config":{"responseTimeoutMs":"soon"}}}`)).
		problem(t, 400, "INVALID_CONDITION")
}

// functionDelete runs last: it deletes what the condition selects, all or
// nothing.
func functionDelete(t *testing.T, env *searchEnv) {
	before := env.count("F", "fn", 1)
	for _, bad := range []struct {
		cond, code string
		status     int
	}{
		{group("OR", simple("$.n", "EQUALS", 1), fnLeaf("boom")), "FUNCTION_CONDITION_FAILED", 400},
		{`{"type":"function","function":{"name":"even","config":{"calculationNodesTags":"nobody"}}}`, "NO_COMPUTE_MEMBER_FOR_TAG", 503},
	} {
		env.call("F", "DELETE", "/entity/fn/1", []byte(bad.cond)).problem(t, bad.status, bad.code)
		if n := env.count("F", "fn", 1); n != before {
			t.Fatalf("a failed delete removed %d entities", before-n)
		}
	}
	cond := group("AND", fnLeaf("even"), group("NOT", simple("$.color", "EQUALS", "green")))
	want := expected(t, env, cond)
	var dr struct {
		Result struct {
			Matched int `json:"numberOfEntitites"`
			Removed int `json:"numberOfEntititesRemoved"`
		} `json:"deleteResult"`
		IDs []string `json:"ids"`
	}
	env.call("F", "DELETE", "/entity/fn/1?verbose=true", []byte(cond)).ok(t).decode(t, &dr)
	sort.Strings(dr.IDs)
	if !slices.Equal(dr.IDs, want) || dr.Result.Removed != len(want) || len(want) == 0 {
		t.Errorf("deleted %+v, want %v", dr, want)
	}
	if n := env.count("F", "fn", 1); n != before-len(want) {
		t.Errorf("count after delete %d, want %d", n, before-len(want))
	}
	if left := expected(t, env, cond); len(left) != 0 {
		t.Errorf("still matching after delete: %v", left)
	}
}
