package streamdata

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/infer"
	"svc/search"
	"svc/storage"
	"svc/storage/memory"
)

// benchN entities of model sb/1 in one tenant on both engines.
const (
	benchN    = 100_000
	benchPage = 100
)

var (
	benchOnce sync.Once
	benchSvcs map[string]*Service
	benchErr  error
)

func benchServices(b *testing.B) map[string]*Service {
	benchOnce.Do(func() {
		ctx := context.Background()
		key := storage.ModelKey{Name: "sb", Version: 1}
		im := infer.NewModel()
		if err := im.Ingest([]byte(`{"u":1,"g":1,"s":"x"}`), infer.DefaultLimits()); err != nil {
			benchErr = err
			return
		}
		schema := im.AppendSimpleView(nil)
		db := openPG(b)
		mm, pm := memory.NewModels(), db.Models()
		for _, ms := range []storage.Models{mm, pm} {
			if err := ms.PutModel(ctx, &storage.Model{Tenant: "bench", Key: key, State: "LOCKED", Schema: schema}); err != nil {
				benchErr = err
				return
			}
		}
		me, pe := memory.NewEntities(), db.Entities()
		for done := 0; done < benchN; {
			tx := &storage.Tx{Tenant: "bench"}
			rand.Read(tx.ID[:])
			for k := 0; k < 2000 && done < benchN; k++ {
				w := storage.Write{Model: key, State: "CREATED", Data: []byte(fmt.Sprintf(`{"u":%d,"g":%d,"s":"name-%d"}`, done, done%100, done))}
				rand.Read(w.ID[:])
				tx.Writes = append(tx.Writes, w)
				done++
			}
			for _, es := range []storage.Entities{me, pe} {
				if _, err := es.Commit(ctx, tx); err != nil {
					benchErr = err
					return
				}
			}
		}
		// The state autovacuum leaves after a bulk load: statistics, and
		// the BRIN ranges summarised (unsummarised ranges are read whole).
		conn, err := pgx.Connect(ctx, testDBURL)
		if err != nil {
			benchErr = err
			return
		}
		_, err = conn.Exec(ctx, "VACUUM ANALYZE entities, entity_revisions")
		conn.Close(ctx)
		if err != nil {
			benchErr = err
			return
		}
		ms := memory.NewSearch(me)
		ps := db.Search(0)
		benchSvcs = map[string]*Service{
			"memory": New(Deps{Configs: memory.NewStreamConfigs(), Models: mm, Planner: search.New(mm, ms, nil, search.Options{}), Searcher: ms}),
			"postgres": New(Deps{Configs: db.StreamConfigs(), Indexes: db.StreamIndexes(), Models: pm,
				Planner: search.New(pm, ps, nil, search.Options{}), Searcher: ps, Pager: ps}),
		}
		// The data range field gets a user index on PostgreSQL (the
		// extension endpoint's path); memory scans either way.
		if _, err := benchSvcs["postgres"].CreateIndex(ctx, "bench", &IndexSpec{EntityClass: "sb.1", Name: "byU", RangeColumn: "$.u"}); err != nil {
			benchErr = err
			return
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchSvcs
}

// benchDefs: the UI's default range (creationDate, the built-in index)
// and a data range field ($.u, numeric, no index).
var benchDefs = map[string]string{
	"creationDate": `{"requestClass":"sb.1","rangeCondition":{"@bean":"com.cyoda.core.conditions.queryable.GreaterThan","fieldName":"creationDate",
		"value":{"@type":"java.util.Date","value":"2000-01-01T00:00:00.000+00:00"}},"rangeOrder":"ASC",
		"columns":[{"name":"id"},{"name":"$.u"},{"name":"$.s"}]}`,
	"data": `{"requestClass":"sb.1","rangeCondition":{"@bean":"com.cyoda.core.conditions.queryable.GreaterThanEquals","fieldName":"$.u",
		"value":{"@type":"java.lang.Integer","value":0}},"rangeOrder":"ASC","columns":[{"name":"id"},{"name":"$.u"},{"name":"$.s"}]}`,
}

// benchRequest is the request the HTTP adapter would decode from
// {"sdDef":def,"pointTime":pt,"offset":offset,"length":benchPage}; the
// definition is parsed on each call, as each request is.
func benchRequest(b *testing.B, def string, pt int64, offset int) *Request {
	d, err := ParseDef([]byte(def))
	if err != nil {
		b.Fatal(err)
	}
	return &Request{Def: d, PointTime: &pt, Offset: offset, Length: benchPage}
}

// walk reads every page of def at pt and returns the rows seen.
func walk(b *testing.B, s *Service, def string, pt int64) int {
	rows := 0
	var buf []byte
	for off := 0; ; off += benchPage {
		out, err := benchGet(s, benchRequest(b, def, pt, off), buf[:0])
		if err != nil {
			b.Fatal(err)
		}
		buf = out
		var r struct {
			Rows []json.RawMessage `json:"rows"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			b.Fatal(err)
		}
		rows += len(r.Rows)
		if len(r.Rows) < benchPage {
			return rows
		}
	}
}

// BenchmarkStreamPage: page 1 and page 1000 (offset 99 900, continued
// from the bookmark the walk left) of 100 rows over 100k entities, for
// the indexed creationDate range and a data range field.
func BenchmarkStreamPage(b *testing.B) {
	svcs := benchServices(b)
	pt := time.Now().UnixMilli()
	for _, engine := range []string{"memory", "postgres"} {
		for _, name := range []string{"creationDate", "data"} {
			s, def := svcs[engine], benchDefs[name]
			// The walk leaves the bookmark page 1000 continues from.
			if n := walk(b, s, def, pt); n != benchN {
				b.Fatalf("%s/%s: walk saw %d rows", engine, name, n)
			}
			if ex, ok := s.pager.(Explainer); ok {
				pl, err := Compile(context.Background(), s.models, s.planner, "bench", benchRequest(b, def, pt, 0).Def)
				if err != nil {
					b.Fatal(err)
				}
				at := time.UnixMilli(pt)
				q := &storage.StreamQuery{Search: *pl.Query, Range: pl.Range, Limit: benchPage}
				q.Search.At = &at
				plan, _, err := ex.ExplainStream(context.Background(), q)
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("%s/%s plan: %s", engine, name, plan)
			}
			for _, page := range []int{1, 1000} {
				b.Run(fmt.Sprintf("%s/%s/page%d", engine, name, page), func(b *testing.B) {
					b.ReportAllocs()
					var buf []byte
					for i := 0; i < b.N; i++ {
						out, err := benchGet(s, benchRequest(b, def, pt, (page-1)*benchPage), buf[:0])
						if err != nil {
							b.Fatal(err)
						}
						buf = out
					}
				})
			}
		}
	}
}

// BenchmarkStreamWalk: rows per second over a walk of all 1000 pages
// (a fresh pointTime each walk, so every page but the first continues
// from a bookmark made by the walk itself).
func BenchmarkStreamWalk(b *testing.B) {
	svcs := benchServices(b)
	for _, engine := range []string{"memory", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			s := svcs[engine]
			b.ReportAllocs()
			start := time.Now()
			rows := 0
			for i := 0; i < b.N; i++ {
				rows += walk(b, s, benchDefs["creationDate"], time.Now().UnixMilli()-int64(i))
			}
			b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
		})
	}
}

// benchGet reads one page and renders it into dst as the HTTP adapter
// does (fast/streamdata_request.go: a uuid string and the marshaled range
// value and columns per row), so the figures keep counting the rendering.
func benchGet(s *Service, r *Request, dst []byte) ([]byte, error) {
	ps, err := s.Prepare(context.Background(), "bench", r)
	if err != nil {
		return nil, err
	}
	b := append(dst, `{"pointTime":`...)
	b = strconv.AppendInt(b, ps.PointTime(), 10)
	b = append(b, `,"rows":[`...)
	n := 0
	last, err := ps.Rows(context.Background(), func(r *Row) error {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"key":"`...)
		b = append(b, uuid.UUID(r.ID).String()...)
		b = append(b, `","sortValues":[`...)
		b = benchValue(b, r.Sort)
		b = append(b, `],"columnsValues":{`...)
		for i, c := range r.Columns {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, c.Name)
			b = append(b, ':')
			b = benchValue(b, c.Value)
		}
		b = append(b, "}}"...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	b = append(b, `],"lastRowIndexPosition":`...)
	b = strconv.AppendInt(b, int64(last), 10)
	return append(b, '}'), nil
}

func benchValue(b []byte, v any) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}
