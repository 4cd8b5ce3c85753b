package fast

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/entity"
	"svc/iam"
	"svc/model"
	"svc/platform/config"
	"svc/search"
	"svc/sqlschema"
	"svc/storage"
	"svc/storage/memory"
	"svc/storage/pgtest"
	"svc/storage/postgres"
	"svc/storage/postgres/pgtestdb"
	"svc/storage/sqlite/sqlitetest"
)

// sqlAuth: "Bearer <tenant>" acts as a user of that tenant, "Bearer
// <tenant>:admin" as one of its admins.
type sqlAuth struct{}

func (sqlAuth) Authenticate(ctx *fasthttp.RequestCtx) (*iam.Principal, error) {
	t, ok := strings.CutPrefix(string(ctx.Request.Header.Peek("Authorization")), "Bearer ")
	if !ok || t == "" {
		return nil, fmt.Errorf("no bearer")
	}
	p := &iam.Principal{Kind: "user", UserID: "u-" + t, TenantID: t}
	if tenant, admin := strings.CutSuffix(t, ":admin"); admin {
		p.TenantID, p.Roles = tenant, []string{iam.RoleAdmin}
	}
	return p, nil
}

// sqlEnv is the entity environment plus the SQL Schema API.
type sqlEnv struct {
	*entityEnv
	sql   *sqlschema.Service
	dbURL string // postgres only
}

func newSQLEnv(t testing.TB, engine string) *sqlEnv {
	t.Helper()
	return newSQLEnvWith(t, engine, sqlLimits{})
}

// sqlLimits are the SQL bounds of a test environment; 0 keeps the default.
type sqlLimits struct{ conns, connsPerTenant, schemas int }

func newSQLEnvWith(t testing.TB, engine string, lim sqlLimits) *sqlEnv {
	t.Helper()
	var ms storage.Models
	var es storage.Entities
	var sr storage.Searcher
	var ss storage.SQLSchemas
	var run storage.SQLRunner
	env := &sqlEnv{}
	// Tests of the bounds hold long queries open while they check what
	// else is served: far past what those checks take on a loaded machine.
	queryTimeout := 20 * time.Second
	if lim != (sqlLimits{}) {
		queryTimeout = 5 * time.Minute
	}
	if engine == "postgres" {
		env.dbURL = pgtest.New(t, "fastsql")
		db := pgtestdb.OpenWith(t, env.dbURL, 8, time.Minute, func(o *postgres.Options) {
			o.SQLMaxConns, o.SQLMaxConnsPerTenant = lim.conns, lim.connsPerTenant
		})
		st := db.SQLSchemas(queryTimeout)
		ms, es, sr, ss, run = db.Models(), db.Entities(), db.Search(time.Minute), st, st
	} else if engine == "sqlite" {
		db := sqlitetest.Open(t)
		st := db.SQLSchemas()
		ms, es, sr, ss, run = db.Models(), db.Entities(), db.Search(), st, st
	} else {
		me := memory.NewEntities()
		st := memory.NewSQLSchemas()
		ms, es, sr, ss, run = memory.NewModels(), me, memory.NewSearch(me), st, st
	}
	msvc := model.New(ms, nil)
	ssvc := search.New(ms, sr, memory.NewSearchJobs(), search.Options{})
	esvc := entity.New(es, ms, entity.GateOf(msvc), entity.WithConditions(ssvc))
	msvc.SetEntityCounter(esvc)
	env.sql = sqlschema.New(ss, ms, run, model.ID, queryTimeout).WithMaxSchemas(lim.schemas)
	cfg := config.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Deps{Auth: sqlAuth{}, Model: msvc, Entities: esvc, Search: ssvc, SQLSchema: env.sql})
	if err != nil {
		t.Fatal(err)
	}
	base, client := serveAPI(t, s)
	env.entityEnv = &entityEnv{t: t, base: base, client: client, ents: es, models: ms, svc: esvc}
	// Roles are cluster-wide: drop every schema (and so its role) even when
	// the test fails half-way. Registered after db.Close, so it runs first.
	t.Cleanup(func() {
		for _, tenant := range []string{"A", "B", "C"} {
			list, err := env.sql.List(context.Background(), tenant)
			if err != nil {
				t.Errorf("cleanup: %v", err)
				return
			}
			for _, sc := range list {
				if _, err := env.sql.Delete(context.Background(), tenant, sc.ID); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			}
		}
	})
	return env
}

const nobelSample = `{"category":"chemistry","year":"2020","laureates":[{"firstname":"Emmanuelle","id":"991","motivation":"...","share":"2","surname":"Charpentier"}]}`

// TestSQLSchemaAPI drives the nine operations on both engines
// (docs/decisions/0024-sql-schema.md).
func TestSQLSchemaAPI(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			env := newSQLEnv(t, engine)
			env.lockedModel("A", "nobel-prize", 1, nobelSample)
			mid := model.ID(storage.ModelKey{Name: "nobel-prize", Version: 1})

			var tables []sqlschema.TableConfig
			env.call("A", "GET", "/sql/schema/genTables/"+mid, nil).ok(t).decode(t, &tables)
			if len(tables) != 3 || tables[0].TableName != "nobel_prize" || tables[1].UniformedPath != "$.laureates[*]" || tables[2].UniformedPath != "json" {
				t.Fatalf("genTables %+v", tables)
			}
			env.call("A", "GET", "/sql/schema/genTables/"+uuid.NewString(), nil).problem(t, 404, "MODEL_NOT_FOUND")
			env.call("B", "GET", "/sql/schema/genTables/"+mid, nil).problem(t, 404, "MODEL_NOT_FOUND")

			body := func(name string, ts []sqlschema.TableConfig) []byte {
				b, _ := jsonMarshal(map[string]any{"id": uuid.NewString(), "schemaName": name, "tables": ts})
				return b
			}
			var id string
			env.call("A", "POST", "/sql/schema/", body("NOBEL_PRIZES", tables)).ok(t).decode(t, &id)
			if u, err := uuid.Parse(id); err != nil || u.Version() != 1 {
				t.Fatalf("id %q is not a v1 uuid", id)
			}
			// Upsert by name: the same id, the tables replaced.
			var id2 string
			env.call("A", "POST", "/sql/schema/", body("NOBEL_PRIZES", tables[:1])).ok(t).decode(t, &id2)
			if id2 != id {
				t.Fatalf("upsert gave a new id %s (was %s)", id2, id)
			}
			var got sqlschema.SchemaConfig
			env.call("A", "GET", "/sql/schema/"+id, nil).ok(t).decode(t, &got)
			if got.ID != id || got.SchemaName != "NOBEL_PRIZES" || len(got.Tables) != 1 {
				t.Fatalf("getSchema %+v", got)
			}
			env.call("A", "GET", "/sql/schema/?schemaName=NOBEL_PRIZES", nil).ok(t).decode(t, &got)
			if got.ID != id {
				t.Fatalf("getSchemaByName %+v", got)
			}
			// Errors of the SQL Schema operations.
			p := env.call("A", "GET", "/sql/schema/?schemaName=larry", nil).problem(t, 404, "NOT_FOUND")
			if p["schemaName"] != "larry" || !strings.Contains(string(env.call("A", "GET", "/sql/schema/?schemaName=larry", nil).body), "Schema larry not found") {
				t.Fatalf("404 by name: %v", p)
			}
			v1 := uuid.Must(uuid.NewUUID()).String()
			if p := env.call("A", "GET", "/sql/schema/"+v1, nil).problem(t, 404, "NOT_FOUND"); p["schemaId"] != v1 {
				t.Fatalf("404 by id: %v", p)
			}
			env.call("A", "GET", "/sql/schema/"+uuid.NewString(), nil).problem(t, 400, "BAD_REQUEST")
			env.call("B", "GET", "/sql/schema/"+id, nil).problem(t, 404, "NOT_FOUND")
			r := env.call("A", "POST", "/sql/schema/", body(strings.Repeat("x", 1025), tables))
			r.problem(t, 400, "BAD_REQUEST")
			if !strings.Contains(string(r.body), "String length of the schema name is outside of the bounds [1,1024]") {
				t.Fatalf("name length message: %s", r.body)
			}
			env.call("A", "POST", "/sql/schema/", []byte(`{"schemaName":"q","tables:":[]}`)).problem(t, 400, "BAD_REQUEST")
			bad := append([]sqlschema.TableConfig(nil), tables...)
			bad[1].TableName = "nobel_prize"
			env.call("A", "POST", "/sql/schema/", body("dup", bad)).problem(t, 400, "BAD_REQUEST")
			bad[1].TableName, bad[1].UniformedPath = "x", "$.nope[*]"
			env.call("A", "POST", "/sql/schema/", body("dup", bad)).problem(t, 400, "BAD_REQUEST")

			// putDefault, listAll, updateTables.
			var def sqlschema.SchemaConfig
			env.call("A", "PUT", "/sql/schema/putDefault/everything", nil).ok(t).decode(t, &def)
			if def.SchemaName != "everything" || len(def.Tables) != 3 {
				t.Fatalf("putDefault %+v", def)
			}
			var all []sqlschema.SchemaConfig
			env.call("A", "GET", "/sql/schema/listAll", nil).ok(t).decode(t, &all)
			if len(all) != 2 || all[0].SchemaName != "NOBEL_PRIZES" || all[1].SchemaName != "everything" {
				t.Fatalf("listAll %+v", all)
			}
			env.call("B", "GET", "/sql/schema/listAll", nil).ok(t).decode(t, &all)
			if len(all) != 0 {
				t.Fatalf("tenant B sees %+v", all)
			}
			mine := append([]sqlschema.TableConfig(nil), tables...)
			mine[0].TableName = "prizes"
			var merged []sqlschema.TableConfig
			b, _ := jsonMarshal(mine)
			env.call("A", "POST", "/sql/schema/updateTables/"+mid, b).ok(t).decode(t, &merged)
			if len(merged) != 3 || merged[0].TableName != "prizes" {
				t.Fatalf("updateTables %+v", merged)
			}

			// Deletes and their messages.
			var msg string
			env.call("A", "DELETE", "/sql/schema/"+id, nil).ok(t).decode(t, &msg)
			if msg != "SQL Schema with id "+id+" deleted" {
				t.Fatalf("delete message %q", msg)
			}
			env.call("A", "DELETE", "/sql/schema/"+id, nil).problem(t, 404, "NOT_FOUND")
			env.call("A", "DELETE", "/sql/schema/?schemaName=everything", nil).ok(t).decode(t, &msg)
			if msg != "SQL Schema with name everything deleted" {
				t.Fatalf("delete message %q", msg)
			}
			env.call("A", "DELETE", "/sql/schema/?schemaName=everything", nil).problem(t, 404, "NOT_FOUND")

			if engine != "postgres" {
				env.call("A", "PUT", "/sql/schema/putDefault/m", nil).ok(t)
				r := env.call("A", "POST", "/sql/query", []byte(`{"schemaName":"m","sql":"SELECT 1"}`))
				r.problem(t, 501, "NOT_IMPLEMENTED_BY_BACKEND")
				if !strings.Contains(string(r.body), "PostgreSQL") {
					t.Fatalf("501 must say PostgreSQL is needed: %s", r.body)
				}
				env.call("A:admin", "GET", "/sql/credentials?schemaName=m", nil).problem(t, 501, "NOT_IMPLEMENTED_BY_BACKEND")
			}
		})
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
