package fast

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/entity"
	"svc/model"
	"svc/search"
	"svc/sqlschema"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/pgtest"
	"svc/storage/postgres"
)

// sqlBench is one PostgreSQL database holding N Nobel-like entities, a
// saved SQL schema over them, and the search and entity services to ask
// the same questions the other way.
type sqlBench struct {
	sql    *sqlschema.Service
	search *search.Service
	ents   *entity.Service
	ids    [][16]byte
}

// sqlBenchEntities is SVC_BENCH_SQL_ENTITIES (default 20000, so `make
// bench` stays short; BENCHMARKS.md figures use 100000).
func sqlBenchEntities() int {
	if n, err := strconv.Atoi(os.Getenv("SVC_BENCH_SQL_ENTITIES")); err == nil && n > 0 {
		return n
	}
	return 20000
}

var nobelCategories = []string{"chemistry", "physics", "medicine", "literature", "peace", "economics"}

// setupSQLBench seeds a fresh database; cleanup drops the schema's role
// (cluster-wide) and the database.
func setupSQLBench(b *testing.B) *sqlBench {
	var sqlBenchEnv *sqlBench
	var sqlBenchErr error
	func() {
		url, drop, err := pgtest.Create("fastsqlbench")
		if err != nil {
			sqlBenchErr = err
			return
		}
		b.Cleanup(func() {
			if err := drop(); err != nil {
				b.Error(err)
			}
		})
		ctx := context.Background()
		db, err := postgres.Open(ctx, postgres.Options{URL: url, MaxConns: 8, AcquireTimeout: 10 * time.Second,
			StatementTimeout: 10 * time.Minute, IdleInTxTimeout: time.Minute, AutoMigrate: true, MigrateLockWait: 30 * time.Second})
		if err != nil {
			sqlBenchErr = err
			return
		}
		ms, es := db.Models(), db.Entities()
		msvc := model.New(ms, nil)
		key := storage.ModelKey{Name: "nobel", Version: 1}
		doc := func(i int) []byte {
			return []byte(fmt.Sprintf(`{"category":"%s","year":"%d","laureates":[{"firstname":"F%d","surname":"S%d","id":"%d","share":"2"},{"firstname":"G%d","surname":"T%d","id":"%d","share":"2"}]}`,
				nobelCategories[i%len(nobelCategories)], 1901+i%120, i, i, i, i, i, i+1))
		}
		if _, err := msvc.Import(ctx, "T", key, "JSON", "SAMPLE_DATA", doc(0)); err != nil {
			sqlBenchErr = err
			return
		}
		if _, err := msvc.Lock(ctx, "T", key); err != nil {
			sqlBenchErr = err
			return
		}
		env := &sqlBench{}
		n := sqlBenchEntities()
		for start := 0; start < n; start += 1000 {
			tx := &storage.Tx{Tenant: "T", ID: uuid.Must(uuid.NewUUID())}
			for i := start; i < start+1000 && i < n; i++ {
				id := uuid.Must(uuid.NewUUID())
				env.ids = append(env.ids, id)
				tx.Writes = append(tx.Writes, storage.Write{ID: id, Model: key, State: "CREATED", Data: doc(i), Transition: "loopback"})
			}
			if _, err := es.Commit(ctx, tx); err != nil {
				sqlBenchErr = err
				return
			}
		}
		st := db.SQLSchemas(time.Minute)
		env.sql = sqlschema.New(st, ms, st, model.ID, time.Minute)
		def, err := env.sql.PutDefault(ctx, "T", "bench")
		if err != nil {
			sqlBenchErr = err
			return
		}
		b.Cleanup(func() {
			if _, err := env.sql.Delete(context.Background(), "T", def.ID); err != nil {
				b.Error(err)
			}
			db.Close()
		})
		env.search = search.New(ms, db.Search(time.Minute), memory.NewSearchJobs(), search.Options{})
		env.ents = entity.New(es, ms, entity.GateOf(msvc), entity.WithConditions(env.search), entity.WithGroupMax(1000))
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			sqlBenchErr = err
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
			sqlBenchErr = err
			return
		}
		sqlBenchEnv = env
	}()
	if sqlBenchErr != nil {
		b.Fatal(sqlBenchErr)
	}
	return sqlBenchEnv
}

func drainSQL(b *testing.B, env *sqlBench, sql string) int {
	cur, err := env.sql.Query(context.Background(), "T", []byte(fmt.Sprintf(`{"schemaName":"bench","sql":%q}`, sql)))
	if err != nil {
		b.Fatal(err)
	}
	defer cur.Close()
	rows := 0
	for {
		r, err := cur.Next()
		if err != nil {
			b.Fatal(err)
		}
		if r == nil {
			return rows
		}
		rows++
	}
}

// BenchmarkSQLViews compares SQL over the views (as the schema's role,
// through sqlschema.Service.Query) with the search and statistics APIs
// answering the same questions. Run with SVC_BENCH_SQL_ENTITIES=100000
// for the BENCHMARKS.md figures.
func BenchmarkSQLViews(b *testing.B) {
	env := setupSQLBench(b)
	ctx := context.Background()
	key := storage.ModelKey{Name: "nobel", Version: 1}
	b.Run("groupby-root/sql", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if n := drainSQL(b, env, `SELECT category, count(*) FROM nobel GROUP BY category`); n != len(nobelCategories) {
				b.Fatalf("%d groups", n)
			}
		}
	})
	b.Run("groupby-root/stats-api", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			g, err := env.ents.GroupedStats(ctx, "T", key, &entity.GroupedQuery{GroupBy: []string{"$.category"}})
			if err != nil {
				b.Fatal(err)
			}
			_ = g
		}
	})
	b.Run("point-join/sql", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			id := uuid.UUID(env.ids[i%len(env.ids)]).String()
			if n := drainSQL(b, env, `SELECT n.category, l.firstname, l.surname FROM nobel n JOIN nobel_laureates l USING (entity_id) WHERE n.entity_id = '`+id+`'`); n != 2 {
				b.Fatalf("%d rows", n)
			}
		}
	})
	b.Run("point-root/sql", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			id := uuid.UUID(env.ids[i%len(env.ids)]).String()
			if n := drainSQL(b, env, `SELECT category, year FROM nobel WHERE entity_id = '`+id+`'`); n != 1 {
				b.Fatalf("%d rows", n)
			}
		}
	})
	// A save replacing the schema (its views rebuilt), and a new schema
	// saved and deleted (on PostgreSQL its database made and dropped).
	b.Run("save/replace", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := env.sql.PutDefault(ctx, "T", "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("save/new+delete", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rec, err := env.sql.PutDefault(ctx, "T", "bench-new")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := env.sql.Delete(ctx, "T", rec.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("point-join/search-api", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			id := uuid.UUID(env.ids[i%len(env.ids)]).String()
			es, err := env.search.Direct(ctx, &search.DirectRequest{Tenant: "T", Model: key,
				Condition: []byte(`{"type":"lifecycle","field":"id","operatorType":"EQUALS","value":"` + id + `"}`)})
			if err != nil || len(es) != 1 {
				b.Fatalf("%d results, %v", len(es), err)
			}
		}
	})
}
