package fast

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/entity"
	"svc/model"
	"svc/platform/config"
	"svc/search"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/sqlite/sqlitetest"
	"svc/streamdata"
)

// streamEnv is a running server with the model, entity and stream-data
// APIs over one engine.
type streamEnv struct {
	*entityEnv
}

func newStreamEnv(t testing.TB, engine string) *streamEnv {
	return newStreamEnvPager(t, engine, nil)
}

// newStreamEnvPager is newStreamEnv whose engine pager is wrapped by wrap
// (nil: as is); on memory that is the scan pager over the snapshot.
func newStreamEnvPager(t testing.TB, engine string, wrap func(storage.StreamPager) storage.StreamPager) *streamEnv {
	t.Helper()
	var ms storage.Models
	var es storage.Entities
	var sr storage.Searcher
	var cfgs storage.StreamConfigs
	var ixs storage.StreamIndexes
	var pager storage.StreamPager
	var explain streamdata.Explainer
	if engine == "postgres" {
		db := newEntityPostgres(t)
		s := db.Search(time.Minute)
		ms, es, sr, cfgs, ixs, pager, explain = db.Models(), db.Entities(), s, db.StreamConfigs(), db.StreamIndexes(), s, s
	} else if engine == "sqlite" {
		db := sqlitetest.Open(t)
		ms, es, sr, cfgs, ixs = db.Models(), db.Entities(), db.Search(), db.StreamConfigs(), db.StreamIndexes()
	} else {
		me := memory.NewEntities()
		ms, es, sr, cfgs, ixs = memory.NewModels(), me, memory.NewSearch(me), memory.NewStreamConfigs(), memory.NewStreamIndexes()
	}
	msvc := model.New(ms, nil)
	ssvc := search.New(ms, sr, nil, search.Options{MaxSortKeys: 3})
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithConditions(ssvc))
	msvc.SetEntityCounter(esvc)
	if pager == nil && wrap != nil {
		pager = streamdata.NewScanPager(sr)
	}
	if wrap != nil {
		pager = wrap(pager)
	}
	sd := streamdata.New(streamdata.Deps{Configs: cfgs, Indexes: ixs, Models: ms, Planner: ssvc, Searcher: sr,
		Pager: pager, Deleter: esvc, Explain: explain})
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: entityTenantAuth{}, Model: msvc, Entities: esvc, Search: ssvc, StreamData: sd})
	if err != nil {
		t.Fatal(err)
	}
	base, client := serveAPI(t, s)
	return &streamEnv{&entityEnv{t: t, base: base, client: client, ents: es, models: ms, svc: esvc}}
}

func (e *streamEnv) with(t testing.TB) *streamEnv { return &streamEnv{e.entityEnv.with(t)} }

// jodaDef is a definition in the Joda-bean wire form: range on $.n,
// columns id and $.name, condition cond (a Joda condition or "").
func jodaDef(class, rangeOp, rangeValue, order, cond string) string {
	if cond == "" {
		cond = `{"@bean":"com.cyoda.core.conditions.GroupCondition","operator":"OR","conditions":[]}`
	}
	return `{"@bean":"com.cyoda.core.streamdata.StreamDataDef","requestClass":"` + class + `",
	"rangeCondition":{"@bean":"com.cyoda.core.conditions.queryable.` + rangeOp + `","fieldName":"$.n","operation":"X",
		"value":{"@type":"java.lang.Integer","value":` + rangeValue + `}},
	"rangeOrder":"` + order + `","condition":` + cond + `,
	"columns":[{"@bean":"com.cyoda.core.reports.columns.ReportSimpleColumn","name":"id"},
		{"@bean":"com.cyoda.core.reports.columns.ReportSimpleColumn","name":"$.name"},
		{"@bean":"com.cyoda.core.reports.columns.ReportAliasColumn","name":"label"}],
	"colDefs":{"@meta":"com.cyoda.core.reports.columndefs.ReportColDef[]","value":[
		{"fullPath":"$.name","parts":{"@meta":"com.cyoda.core.reports.columndefs.ReportColPartDef[]","value":[
			{"rootClass":"` + class + `","path":"$.name","type":"java.lang.String"}]},"colType":"java.lang.String"}]},
	"aliasDefs":{"@meta":"com.cyoda.core.reports.aliasdefs.AliasDef[]","value":[
		{"name":"label","aliasType":"STRING","aliasPaths":{"@meta":"com.cyoda.core.reports.aliasdefs.AliasPath[]","value":[
			{"colDef":{"fullPath":"$.nick","parts":{"@meta":"x[]","value":[{"rootClass":"` + class + `","path":"$.nick"}]}},
			 "mapperClass":"com.cyoda.core.reports.aliasmappers.BasicMapper"},
			{"colDef":{"fullPath":"$.name","parts":{"@meta":"x[]","value":[{"rootClass":"` + class + `","path":"$.name"}]}},
			 "mapperClass":"com.cyoda.core.reports.aliasmappers.BasicMapper"}]}}]}}`
}

type fetchResult struct {
	PointTime int64 `json:"pointTime"`
	Offset    int   `json:"offset"`
	PageSize  int   `json:"pageSize"`
	Last      int   `json:"lastRowIndexPosition"`
	Rows      []struct {
		Key        string         `json:"key"`
		SortValues []any          `json:"sortValues"`
		Columns    map[string]any `json:"columnsValues"`
	} `json:"rows"`
}

func (e *streamEnv) page(tenant, def string, pointTime int64, offset, length int) fetchResult {
	e.t.Helper()
	pt := "null"
	if pointTime != 0 {
		pt = fmt.Sprint(pointTime)
	}
	body := `{"@bean":"com.cyoda.core.streamdata.StreamDataRequest","sdDef":` + def + `,"pointTime":` + pt +
		`,"offset":` + fmt.Sprint(offset) + `,"length":` + fmt.Sprint(length) + `,"fromPosIndex":0}`
	var r fetchResult
	e.call(tenant, "POST", "/platform-api/stream-data/get", []byte(body)).ok(e.t).decode(e.t, &r)
	return r
}

func keys(r fetchResult) []string {
	out := make([]string, len(r.Rows))
	for i, row := range r.Rows {
		out[i] = row.Key
	}
	return out
}

// seedStream makes model "sd" v1 with n entities {n: i%m, name, nick?}.
func (e *streamEnv) seedStream(tenant string, count, mod int) map[string]int {
	e.t.Helper()
	e.lockedModel(tenant, "sd", 1, `{"n":1,"name":"a","nick":"b","cat":"x"}`)
	ids := map[string]int{}
	for i := 0; i < count; i++ {
		nick := ""
		if i%3 == 0 {
			nick = fmt.Sprintf(`,"nick":"nick%d"`, i)
		}
		cat := "Physics"
		if i%2 == 1 {
			cat = "chemistry"
		}
		id, _ := e.create(tenant, "sd", 1, fmt.Sprintf(`{"n":%d,"name":"e%03d","cat":"%s"%s}`, i%mod, i, cat, nick))
		ids[id] = i
	}
	return ids
}

func TestStreamDataConfigCRUD(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			e := newStreamEnv(t, engine)
			def := jodaDef("sd.1", "GreaterThan", "0", "ASC", "")
			var id string
			e.call("t1", "POST", "/platform-api/stream-data/config",
				[]byte(`{"name":"r1","description":"d1","streamDataDef":`+def+`}`)).ok(t).decode(t, &id)
			got := e.call("t1", "GET", "/platform-api/stream-data/config?configId="+id, nil).ok(t)
			if !strings.HasPrefix(got.ctype, "application/hal+json") {
				t.Fatalf("content type %q", got.ctype)
			}
			var c map[string]json.RawMessage
			got.decode(t, &c)
			var sent, stored any
			_ = json.Unmarshal([]byte(def), &sent)
			_ = json.Unmarshal(c["streamDataDef"], &stored)
			if fmt.Sprint(sent) != fmt.Sprint(stored) || !strings.Contains(string(c["streamDataDef"]), `"@meta"`) {
				t.Fatalf("definition did not round-trip: %s", c["streamDataDef"])
			}
			if string(c["owner"]) != `"u-t1"` || string(c["name"]) != `"r1"` {
				t.Fatalf("config %s", got.body)
			}
			// Another tenant does not see it.
			e.call("t2", "GET", "/platform-api/stream-data/config?configId="+id, nil).problem(t, 404, "NOT_FOUND")
			// PUT takes the id from the body.
			e.call("t1", "PUT", "/platform-api/stream-data/config",
				[]byte(`{"id":"`+id+`","name":"r1b","streamDataDef":`+def+`}`)).ok(t)
			var list []map[string]any
			e.call("t1", "GET", "/platform-api/stream-data/config/list", nil).ok(t).decode(t, &list)
			if len(list) != 1 || list[0]["name"] != "r1b" || list[0]["owner"] != "u-t1" {
				t.Fatalf("list %v", list)
			}
			e.call("t1", "PUT", "/platform-api/stream-data/config?configId=6f1c2a80-0000-1000-8000-000000000000",
				[]byte(`{"name":"x","streamDataDef":`+def+`}`)).problem(t, 404, "NOT_FOUND")
			e.call("t1", "DELETE", "/platform-api/stream-data/config?configId="+id, nil).ok(t)
			e.call("t1", "GET", "/platform-api/stream-data/config?configId="+id, nil).problem(t, 404, "NOT_FOUND")
			e.call("t1", "DELETE", "/platform-api/stream-data/config?configId="+id, nil).problem(t, 404, "NOT_FOUND")
		})
	}
}

// Stream data (docs/decisions/0025-stream-data.md): export, import with failOnExists → 409, import without is
// idempotent, data.value container; the plain data array is accepted.
func TestStreamDataExportImport(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			e := newStreamEnv(t, engine)
			var a, b string
			e.call("t1", "POST", "/platform-api/stream-data/config", []byte(`{"name":"a","streamDataDef":`+jodaDef("sd.1", "GreaterThan", "0", "ASC", "")+`}`)).ok(t).decode(t, &a)
			e.call("t1", "POST", "/platform-api/stream-data/config", []byte(`{"name":"b","streamDataDef":`+jodaDef("other.2", "GreaterThan", "0", "ASC", "")+`}`)).ok(t).decode(t, &b)
			type container struct {
				Bean string `json:"@bean"`
				Data struct {
					Meta  string            `json:"@meta"`
					Value []json.RawMessage `json:"value"`
				} `json:"data"`
			}
			var all container
			exp := e.call("t1", "GET", "/platform-api/stream-data/export-all", nil).ok(t)
			exp.decode(t, &all)
			if len(all.Data.Value) != 2 || !strings.HasSuffix(all.Data.Meta, "[]") {
				t.Fatalf("export-all %s", exp.body)
			}
			var byClass container
			e.call("t1", "GET", "/platform-api/stream-data/export-by-class?entityClass=other.2", nil).ok(t).decode(t, &byClass)
			if len(byClass.Data.Value) != 1 || !strings.Contains(string(byClass.Data.Value[0]), b) {
				t.Fatalf("export-by-class %v", byClass.Data.Value)
			}
			var byIDs container
			e.call("t1", "GET", "/platform-api/stream-data/export-by-ids?includeIds="+a+","+b, nil).ok(t).decode(t, &byIDs)
			if len(byIDs.Data.Value) != 2 {
				t.Fatalf("export-by-ids comma-joined: %d", len(byIDs.Data.Value))
			}
			e.call("t1", "GET", "/platform-api/stream-data/export-by-ids?includeIds="+a+"&includeIds="+b, nil).ok(t).decode(t, &byIDs)
			if len(byIDs.Data.Value) != 2 {
				t.Fatalf("export-by-ids repeated: %d", len(byIDs.Data.Value))
			}
			e.call("t1", "POST", "/platform-api/stream-data/import?failOnExists=true", exp.body).problem(t, 409, "CONFLICT")
			e.call("t1", "POST", "/platform-api/stream-data/import", exp.body).ok(t)
			e.call("t1", "POST", "/platform-api/stream-data/import?failOnExists=false", exp.body).ok(t)
			var list []map[string]any
			e.call("t1", "GET", "/platform-api/stream-data/config/list", nil).ok(t).decode(t, &list)
			if len(list) != 2 {
				t.Fatalf("import was not idempotent: %d configs", len(list))
			}
			// The flattened container form into another tenant keeps ids.
			flat := `{"data":[` + string(all.Data.Value[0]) + `,` + string(all.Data.Value[1]) + `]}`
			e.call("t2", "POST", "/platform-api/stream-data/import?failOnExists=true", []byte(flat)).ok(t)
			e.call("t2", "GET", "/platform-api/stream-data/config?configId="+a, nil).ok(t)
			e.call("t1", "POST", "/platform-api/stream-data/import", []byte(`{"data":{"value":[{"name":"x","streamDataDef":{"rangeOrder":"SIDEWAYS"}}]}}`)).
				problem(t, 400, "BAD_REQUEST")
		})
	}
}

// Stream data (docs/decisions/0025-stream-data.md): order by range value then id (both directions), short last
// page, Joda and REST conditions agree, IContains sent as CONTAINS is
// case-insensitive, alias columns coalesce.
func TestStreamDataGet(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			e := newStreamEnv(t, engine)
			ids := e.seedStream("t1", 23, 5)
			for _, order := range []string{"ASC", "DESC"} {
				def := jodaDef("sd.1", "GreaterThanEquals", "1", order, "")
				var all []string
				var pt int64
				var prevN float64 = -1
				var prevID string
				for off := 0; ; off += 5 {
					p := e.page("t1", def, pt, off, 5)
					if pt == 0 {
						if p.PointTime == 0 {
							t.Fatal("no pointTime chosen")
						}
						pt = p.PointTime
					} else if p.PointTime != pt {
						t.Fatalf("pointTime changed %d → %d", pt, p.PointTime)
					}
					if p.Offset != off || p.PageSize != 5 || p.Last != off+len(p.Rows)-1 {
						t.Fatalf("page head %+v", p)
					}
					for _, r := range p.Rows {
						n := r.SortValues[0].(float64)
						if prevN >= 0 {
							less := n > prevN || n == prevN && r.Key > prevID
							if order == "DESC" {
								less = n < prevN || n == prevN && r.Key < prevID
							}
							if !less {
								t.Fatalf("%s order broken at %v/%s after %v/%s", order, n, r.Key, prevN, prevID)
							}
						}
						prevN, prevID = n, r.Key
						i := ids[r.Key]
						if r.Columns["id"] != r.Key || r.Columns["$.name"] != fmt.Sprintf("e%03d", i) {
							t.Fatalf("columns %v", r.Columns)
						}
						want := fmt.Sprintf("e%03d", i)
						if i%3 == 0 {
							want = fmt.Sprintf("nick%d", i)
						}
						if r.Columns["label"] != want {
							t.Fatalf("alias label %v, want %s", r.Columns["label"], want)
						}
					}
					all = append(all, keys(p)...)
					if len(p.Rows) < 5 {
						break
					}
				}
				// n%5 ≥ 1: 23 entities minus the five with n = 0 (0,5,10,15,20).
				if len(all) != 18 {
					t.Fatalf("%s: %d rows, want 18", order, len(all))
				}
			}
			// Joda IContains sent as CONTAINS and the REST form agree.
			joda := jodaDef("sd.1", "GreaterThanEquals", "0", "ASC",
				`{"@bean":"com.cyoda.core.conditions.GroupCondition","operator":"AND","conditions":[
				{"@bean":"com.cyoda.core.conditions.nonqueryable.IContains","fieldName":"$.cat","operation":"CONTAINS",
				 "value":{"@type":"String","value":"PHYS"}}]}`)
			rest := jodaDef("sd.1", "GreaterThanEquals", "0", "ASC",
				`{"type":"group","operator":"AND","conditions":[{"type":"simple","jsonPath":"$.cat","operatorType":"ICONTAINS","value":"PHYS"}]}`)
			a, b := e.page("t1", joda, 0, 0, 100), e.page("t1", rest, 0, 0, 100)
			if len(a.Rows) != 12 || strings.Join(keys(a), ",") != strings.Join(keys(b), ",") {
				t.Fatalf("Joda %d rows, REST %d rows; want the same 12", len(a.Rows), len(b.Rows))
			}
			// Another tenant cannot read the model.
			e.call("t2", "POST", "/platform-api/stream-data/get", []byte(`{"sdDef":`+joda+`}`)).problem(t, 404, "MODEL_NOT_FOUND")
		})
	}
}

// Definitions that cannot be served answer 400 naming the path or operator.
func TestStreamDataUnservable(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t, "memory")
	e.seedStream("t1", 1, 1)
	multi := `{"requestClass":"sd.1","columns":[{"name":"tenantId.legalEntity.name"}],
		"colDefs":[{"fullPath":"tenantId.legalEntity.name","parts":[{"rootClass":"A","path":"tenantId"},{"rootClass":"B","path":"legalEntity.name"}]}]}`
	props := e.call("t1", "POST", "/platform-api/stream-data/get", []byte(`{"sdDef":`+multi+`}`)).problem(t, 400, "INVALID_FIELD_PATH")
	if props["path"] != "tenantId.legalEntity.name" {
		t.Fatalf("props %v", props)
	}
	changed := `{"requestClass":"sd.1","condition":{"@bean":"com.cyoda.core.conditions.GroupCondition","operator":"AND","conditions":[
		{"@bean":"com.cyoda.core.conditions.nonqueryable.IsChanged","fieldName":"$.n","operation":"IS_CHANGED","lookback":2}]}}`
	props = e.call("t1", "POST", "/platform-api/stream-data/config", []byte(`{"name":"x","streamDataDef":`+changed+`}`)).problem(t, 400, "BAD_REQUEST")
	if props["operator"] != "IS_CHANGED" {
		t.Fatalf("props %v", props)
	}
	unknown := `{"requestClass":"sd.1","condition":{"type":"group","operator":"AND","conditions":[
		{"type":"simple","jsonPath":"$.nope","operatorType":"EQUALS","value":1}]}}`
	e.call("t1", "POST", "/platform-api/stream-data/get", []byte(`{"sdDef":`+unknown+`}`)).problem(t, 400, "INVALID_FIELD_PATH")
	e.call("t1", "POST", "/platform-api/stream-data/get", []byte(`{"sdDef":{"requestClass":"nope.1"}}`)).problem(t, 404, "MODEL_NOT_FOUND")
}

// Stream data (docs/decisions/0025-stream-data.md): delete removes every match whatever offset and length say,
// through the entity delete path, and counts with the contract's spelling.
func TestStreamDataDelete(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			e := newStreamEnv(t, engine)
			ids := e.seedStream("t1", 20, 4)
			def := jodaDef("sd.1", "Equals", "2", "ASC", "")
			r := e.call("t1", "DELETE", "/platform-api/stream-data/delete",
				[]byte(`{"sdDef":`+def+`,"pointTime":null,"offset":3,"length":1,"fromPosIndex":0}`)).ok(t)
			var res map[string]any
			r.decode(t, &res)
			if res["numberOfEntitites"] != float64(5) || res["numberOfEntititesRemoved"] != float64(5) {
				t.Fatalf("delete result %s", r.body)
			}
			for id, i := range ids {
				st := e.call("t1", "GET", "/entity/"+id, nil).status
				if (i%4 == 2) != (st == http.StatusNotFound) {
					t.Fatalf("entity %d (n=%d): status %d", i, i%4, st)
				}
				if i%4 != 2 {
					continue
				}
				// The tombstone is the caller's like any delete (issue 13
				// item 4): user id, kind and executor.
				var changes []map[string]any
				e.call("t1", "GET", "/entity/"+id+"/changes", nil).ok(t).decode(t, &changes)
				if c := changes[0]; len(changes) != 2 || c["changeType"] != "DELETE" || c["user"] != "u-t1" || c["attributedKind"] != "user" ||
					fmt.Sprint(c["executedBy"]) != "map[id:u-t1 kind:user]" {
					t.Fatalf("changes of a stream-deleted entity: %v", changes)
				}
			}
			if e.count("t1", "sd", 1) != 15 {
				t.Fatalf("count %d, want 15", e.count("t1", "sd", 1))
			}
		})
	}
}

// Stream data (docs/decisions/0025-stream-data.md) and issue item 5: a 50-page walk at one pointTime while
// writers create, update and delete gives the same pages as a walk of the
// same pointTime after the writers stop, and exactly the entities that
// existed at that instant.
func TestStreamDataWalkUnderWrites(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			e := newStreamEnv(t, engine)
			ids := e.seedStream("t1", 250, 1000)
			def := jodaDef("sd.1", "GreaterThanEquals", "0", "ASC", "")
			first := e.page("t1", def, 0, 0, 5)
			pt := first.PointTime
			time.Sleep(2 * time.Millisecond) // writes below land after pt
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var writes atomic.Int64
			idList := make([]string, 0, len(ids))
			for id := range ids {
				idList = append(idList, id)
			}
			sort.Strings(idList)
			for w := 0; w < 2; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					// Not e.call: a writer goroutine must not stop the test.
					send := func(method, path, body string) {
						req, err := http.NewRequestWithContext(ctx, method, e.base+path, strings.NewReader(body))
						if err != nil {
							return
						}
						req.Header.Set("Authorization", "Bearer t1")
						if resp, err := e.client.Do(req); err == nil {
							resp.Body.Close()
							if resp.StatusCode == 200 {
								writes.Add(1)
							}
						}
					}
					for i := 0; ctx.Err() == nil; i++ {
						switch i % 3 {
						case 0:
							send("POST", "/entity/JSON/sd/1", fmt.Sprintf(`{"n":%d,"name":"new","cat":"x"}`, i))
						case 1:
							send("PATCH", "/entity/JSON/"+idList[(w*97+i)%len(idList)], `{"n":-5}`)
						case 2:
							send("DELETE", "/entity/"+idList[(w*131+i*7)%len(idList)], "")
						}
					}
				}(w)
			}
			walk := func() [][]string {
				pages := [][]string{keys(first)}
				for p := 1; p < 50; p++ {
					pages = append(pages, keys(e.page("t1", def, pt, p*5, 5)))
				}
				return pages
			}
			during := walk()
			cancel()
			wg.Wait()
			if writes.Load() == 0 {
				t.Fatal("no concurrent writes happened")
			}
			after := walk()
			seen := map[string]bool{}
			for p := range during {
				if strings.Join(during[p], ",") != strings.Join(after[p], ",") {
					t.Fatalf("page %d differs:\n%v\n%v", p, during[p], after[p])
				}
				for _, k := range during[p] {
					if seen[k] {
						t.Fatalf("row %s on two pages", k)
					}
					seen[k] = true
					if _, ok := ids[k]; !ok {
						t.Fatalf("row %s did not exist at pointTime", k)
					}
				}
			}
			if len(seen) != 250 {
				t.Fatalf("walk saw %d entities, want 250", len(seen))
			}
			// Page 30 read cold (a new offset, no bookmark path) agrees.
			if got := keys(e.page("t1", def, pt, 151, 5)); strings.Join(got, ",") != strings.Join(append(during[30][1:], during[31][0]), ",") {
				t.Fatalf("cold offset page %v", got)
			}
		})
	}
}

// Stream data (docs/decisions/0025-stream-data.md) and issue item 4: index/list shows the built-ins; the plan
// is ALL without a usable index and COMPOSITE once a composite index
// exists and is ready.
func TestStreamDataIndexesAndPlan(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			e := newStreamEnv(t, engine)
			e.seedStream("t1", 30, 7)
			var list []map[string]any
			e.call("t1", "GET", "/platform-api/stream-data/index/list?entityClass=sd.1", nil).ok(t).decode(t, &list)
			if len(list) != 2 || list[0]["rangeField"].(map[string]any)["columnPath"] != "creationDate" || list[0]["persisted"] != false {
				t.Fatalf("built-ins %v", list)
			}
			cond := `{"@bean":"com.cyoda.core.conditions.GroupCondition","operator":"AND","conditions":[
				{"@bean":"com.cyoda.core.conditions.queryable.Equals","fieldName":"$.cat","operation":"EQUALS","value":{"@type":"String","value":"Physics"}},
				{"@bean":"com.cyoda.core.conditions.queryable.GreaterThan","fieldName":"$.n","operation":"GREATER_THAN","value":{"@type":"java.lang.Integer","value":2}}]}`
			body := []byte(`{"entityClass":"sd.1","condition":` + cond + `,"aliasDefs":[]}`)
			var plan map[string]any
			e.call("t1", "POST", "/platform-api/stream-data/query-plan", body).ok(t).decode(t, &plan)
			opt, _ := json.Marshal(plan["optimized"])
			if !strings.Contains(string(opt), `"ALL"`) || plan["original"] == nil {
				t.Fatalf("plan without index: %s", opt)
			}
			// Issue 18 item 4: with no serving index the plan suggests the
			// composite index that would serve it (equality on $.cat,
			// range $.n); PostgreSQL adds its DDL and the EXPLAIN of the
			// page's SQL, memory says it has no EXPLAIN.
			sugg, _ := plan["suggestedIndexes"].([]any)
			if len(sugg) != 1 || plan["servedBy"] != nil {
				t.Fatalf("advice without index: %v / servedBy %v", plan["suggestedIndexes"], plan["servedBy"])
			}
			sg := sugg[0].(map[string]any)
			if sg["entityClass"] != "sd.1" || sg["rangeColPath"] != "$.n" || fmt.Sprint(sg["columns"]) != "[$.cat]" {
				t.Fatalf("suggestion %v", sg)
			}
			if engine == "postgres" {
				ddl, _ := sg["ddl"].(string)
				if !strings.HasPrefix(ddl, "CREATE INDEX CONCURRENTLY sdix_") || !strings.Contains(ddl, `(doc #>> '{"cat"}'::text[])`) ||
					!strings.Contains(ddl, "model_name = 'sd'") || plan["pgExplain"] == nil || plan["pgSql"] == nil || plan["indexesUsed"] == nil {
					t.Fatalf("PostgreSQL advice: ddl %q, explain %v", ddl, plan["pgExplain"] != nil)
				}
			} else if _, has := sg["ddl"]; has || plan["pgExplain"] != nil || !strings.Contains(fmt.Sprint(plan["explainNote"]), "no EXPLAIN") {
				t.Fatalf("memory plan claims an EXPLAIN or DDL: %v", plan)
			}
			// Following the advice: the suggestion's body is the extension's.
			delete(sg, "ddl")
			sg["name"] = "byCat"
			adv, _ := json.Marshal(sg)
			var created map[string]string
			e.call("t1", "POST", "/platform-api/stream-data/index", adv).ok(t).decode(t, &created)
			e.call("t1", "POST", "/platform-api/stream-data/index",
				[]byte(`{"entityClass":"sd.1","name":"byCat","rangeColPath":"$.n","columns":["$.cat"]}`)).problem(t, 409, "CONFLICT")
			e.call("t1", "GET", "/platform-api/stream-data/index/list?entityClass=sd.1", nil).ok(t).decode(t, &list)
			if len(list) != 3 || list[2]["indexId"] != created["indexId"] || list[2]["readyForQuerying"] != true || list[2]["persisted"] != true {
				t.Fatalf("index list %v", list)
			}
			e.call("t1", "POST", "/platform-api/stream-data/query-plan", body).ok(t).decode(t, &plan)
			o := plan["optimized"].(map[string]any)
			if o["type"] != "COMPOSITE" || o["indexId"] != created["indexId"] || o["indexValuesJson"] != `["Physics"]` {
				t.Fatalf("plan with index: %v", o)
			}
			if sb, _ := plan["servedBy"].(map[string]any); sb["indexId"] != created["indexId"] || sb["indexName"] != "byCat" ||
				len(plan["suggestedIndexes"].([]any)) != 0 {
				t.Fatalf("served plan: servedBy %v, suggestions %v", plan["servedBy"], plan["suggestedIndexes"])
			}
			if engine == "postgres" {
				if plan["pgExplain"] == nil {
					t.Fatalf("no pgExplain: %v", plan)
				}
			}
			// The rows agree with the plan's promise.
			def := jodaDef("sd.1", "GreaterThan", "2", "ASC", `{"@bean":"com.cyoda.core.conditions.GroupCondition","operator":"AND","conditions":[
				{"@bean":"com.cyoda.core.conditions.queryable.Equals","fieldName":"$.cat","operation":"EQUALS","value":{"@type":"String","value":"Physics"}}]}`)
			if p := e.page("t1", def, 0, 0, 100); len(p.Rows) != 8 {
				t.Fatalf("rows %d, want 8", len(p.Rows))
			}
			e.call("t1", "DELETE", "/platform-api/stream-data/index?indexId="+created["indexId"], nil).ok(t)
			e.call("t1", "GET", "/platform-api/stream-data/index/list?entityClass=sd.1", nil).ok(t).decode(t, &list)
			if len(list) != 2 {
				t.Fatalf("after drop %v", list)
			}
			// A range-only index (no equality columns) serves SIMPLE leaves.
			e.call("t1", "POST", "/platform-api/stream-data/index",
				[]byte(`{"entityClass":"sd.1","name":"byN","rangeColPath":"$.n"}`)).ok(t).decode(t, &created)
			e.call("t1", "POST", "/platform-api/stream-data/query-plan", body).ok(t).decode(t, &plan)
			if o := plan["optimized"].(map[string]any); o["type"] != "SIMPLE" || o["indexId"] != created["indexId"] {
				t.Fatalf("plan with a range index: %v", o)
			}
			e.call("t1", "POST", "/platform-api/stream-data/index",
				[]byte(`{"entityClass":"sd.1","name":"bad","rangeColPath":"$.tags[*]"}`)).problem(t, 400, "INVALID_FIELD_PATH")
			// A range on creationDate alone is served by the built-in index:
			// servedBy names it and nothing is suggested.
			byDate := []byte(`{"entityClass":"sd.1","condition":{"@bean":"com.cyoda.core.conditions.GroupCondition","operator":"AND","conditions":[
				{"@bean":"com.cyoda.core.conditions.queryable.GreaterThan","fieldName":"creationDate","operation":"GREATER_THAN",
				 "value":{"@type":"java.util.Date","value":"2020-01-01T00:00:00.000+00:00"}}]}}`)
			e.call("t1", "POST", "/platform-api/stream-data/query-plan", byDate).ok(t).decode(t, &plan)
			if sb, _ := plan["servedBy"].(map[string]any); sb["indexName"] != "builtin_creationDate" || sb["persisted"] != false ||
				len(plan["suggestedIndexes"].([]any)) != 0 {
				t.Fatalf("creationDate plan: %v / servedBy %v / suggestions %v", plan["optimized"], plan["servedBy"], plan["suggestedIndexes"])
			}
		})
	}
}

// hookPager calls onRow before handing each row of a page to the renderer
// (i is its index in the page); an error from onRow ends the page.
type hookPager struct {
	inner storage.StreamPager
	onRow atomic.Pointer[func(q *storage.StreamQuery, i int, e *storage.Entity) error]
}

func (h *hookPager) StreamPage(ctx context.Context, q *storage.StreamQuery, fn func(e *storage.Entity, m storage.StreamMark) error) error {
	hook := h.onRow.Load()
	i := 0
	return h.inner.StreamPage(ctx, q, func(e *storage.Entity, m storage.StreamMark) error {
		if hook != nil {
			if err := (*hook)(q, i, e); err != nil {
				return err
			}
		}
		i++
		return fn(e, m)
	})
}

// bodyReader reads a response body as it arrives, telling waiters about
// every read.
type bodyReader struct {
	mu   sync.Mutex
	buf  []byte
	done bool
	more chan struct{}
}

func (r *bodyReader) run(body io.Reader) {
	p := make([]byte, 512)
	for {
		n, err := body.Read(p)
		r.mu.Lock()
		r.buf = append(r.buf, p[:n]...)
		if err != nil {
			r.done = true
		}
		r.mu.Unlock()
		select {
		case r.more <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// waitFor waits until the bytes received contain every one of subs, or
// the body ends, or 60 s pass (a loaded machine); it reports whether they
// all arrived.
func (r *bodyReader) waitFor(subs ...string) bool {
	deadline := time.After(60 * time.Second)
	for {
		r.mu.Lock()
		all, done := true, r.done
		for _, s := range subs {
			all = all && strings.Contains(string(r.buf), s)
		}
		r.mu.Unlock()
		if all || done {
			return all
		}
		select {
		case <-r.more:
		case <-deadline:
			return false
		}
	}
}

// Issue 18 item 3, rows streamed to the socket: before the engine hands
// over the last row of a 400-row page, the client has already received
// the first row and every row up to two flush windows before the last (so
// the server holds a bounded tail of the page, not the page). A failure
// after rows went out ends the object with an "error" member. Both
// engines: PostgreSQL rows come from the cursor, memory rows from the
// snapshot.
func TestStreamDataGetStreams(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			hp := &hookPager{}
			e := newStreamEnvPager(t, engine, func(p storage.StreamPager) storage.StreamPager { hp.inner = p; return hp })
			const n = 400
			e.seedStream("t1", n, 1000)
			def := jodaDef("sd.1", "GreaterThanEquals", "0", "ASC", "")
			body := `{"sdDef":` + def + `,"pointTime":null,"offset":0,"length":` + fmt.Sprint(n) + `,"fromPosIndex":0}`
			rd := &bodyReader{more: make(chan struct{}, 1)}
			var seen []string
			var mu sync.Mutex
			var waited atomic.Bool
			hook := func(q *storage.StreamQuery, i int, ent *storage.Entity) error {
				mu.Lock()
				seen = append(seen, uuid.UUID(ent.ID).String())
				mu.Unlock()
				if i != n-1 {
					return nil
				}
				// The engine is about to hand over the last row.
				mu.Lock()
				first, back := seen[0], seen[n-1-2*64]
				mu.Unlock()
				if !rd.waitFor(first, back) {
					return fmt.Errorf("the client had not received rows 0 and %d when the last row was read", n-1-2*64)
				}
				waited.Store(true)
				return nil
			}
			hp.onRow.Store(&hook)
			req, err := http.NewRequest("POST", e.base+"/platform-api/stream-data/get", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer t1")
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Transfer-Encoding") == "" && resp.ContentLength >= 0 {
				t.Fatalf("status %d, content length %d (a streamed body has none)", resp.StatusCode, resp.ContentLength)
			}
			rd.run(resp.Body)
			var page fetchResult
			if err := json.Unmarshal(rd.buf, &page); err != nil {
				t.Fatalf("body does not parse: %v (%d bytes, ends %q)", err, len(rd.buf), rd.buf[max(0, len(rd.buf)-200):])
			}
			if !waited.Load() || len(page.Rows) != n || page.Last != n-1 {
				t.Fatalf("hook waited %v, %d rows, lastRowIndexPosition %d", waited.Load(), len(page.Rows), page.Last)
			}

			// A failure after rows went out: status 200 was sent, the rows
			// written stay, and "error" ends the object.
			fail := func(q *storage.StreamQuery, i int, ent *storage.Entity) error {
				if i == 5 {
					return fmt.Errorf("engine failed mid-page")
				}
				return nil
			}
			hp.onRow.Store(&fail)
			r := e.call("t1", "POST", "/platform-api/stream-data/get", []byte(body)).ok(t)
			var broken struct {
				Rows  []json.RawMessage `json:"rows"`
				Last  *int              `json:"lastRowIndexPosition"`
				Error struct {
					ErrorCode string `json:"errorCode"`
				} `json:"error"`
			}
			r.decode(t, &broken)
			if len(broken.Rows) != 5 || broken.Last != nil || broken.Error.ErrorCode != "SERVER_ERROR" {
				t.Fatalf("page failing at row 5: %s", r.body)
			}
		})
	}
}
