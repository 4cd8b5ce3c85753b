package sqlschema

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/infer"
	"svc/platform/apierr"
	"svc/storage"
)

// Error codes of the SQL Schema API (entries of the platform/apierr catalogue):
// apierr.SQLNameClash: putDefault met duplicate table or field names (422).
// apierr.SQLError: PostgreSQL refused a statement of POST /sql/query (400).
// apierr.NotImplementedByBackend: the engine keeps configuration only (501).
// apierr.SQLTenantConnectionsBusy: the tenant's queries hold all the SQL
// connections it may have (429, Retry-After).
// apierr.SQLConnectionsBusy: svc's SQL connections are all in use (503,
// Retry-After).
// apierr.SQLSchemaLimitReached: the tenant has SVC_SQL_MAX_SCHEMAS_PER_TENANT
// schemas already (409).
// apierr.SQLSchemaInUse: the schema's role cannot be dropped yet (409).
// apierr.SQLRoleRightsNotRevoked: the database still grants PUBLIC rights a
// schema role must not hold (503).
// apierr.SQLDatabaseUnavailable: svc cannot create the schema's own
// database or postgres_fdw in it (503).

// MaxSchemaNameLen bounds schemaName (Cloud's [1,1024]).
const MaxSchemaNameLen = 1024

// Service runs the SQL Schema API for one deployment. Safe for concurrent
// use.
type Service struct {
	schemas storage.SQLSchemas
	models  storage.Models
	runner  storage.SQLRunner
	// ModelID is the id a model key has in the API (model.ID).
	modelID      func(storage.ModelKey) string
	queryTimeout time.Duration
	// maxSchemas bounds a tenant's saved schemas (each a PostgreSQL
	// schema and login role); 0 means no bound.
	maxSchemas int
}

// WithMaxSchemas bounds the schemas one tenant may save
// (SVC_SQL_MAX_SCHEMAS_PER_TENANT) and returns s.
func (s *Service) WithMaxSchemas(n int) *Service {
	s.maxSchemas = n
	return s
}

// MaxSchemas is the bound WithMaxSchemas set.
func (s *Service) MaxSchemas() int { return s.maxSchemas }

// New builds the service. runner may be nil (queries then need
// PostgreSQL); queryTimeout bounds POST /sql/query statements.
func New(schemas storage.SQLSchemas, models storage.Models, runner storage.SQLRunner,
	modelID func(storage.ModelKey) string, queryTimeout time.Duration) *Service {
	return &Service{schemas: schemas, models: models, runner: runner, modelID: modelID, queryTimeout: queryTimeout}
}

func schemaNotFoundByName(name string) error {
	return apierr.New(apierr.NotFound, "Schema "+name+" not found", apierr.P("schemaName", name))
}

func schemaNotFoundByID(id string) error {
	return apierr.New(apierr.NotFound, "Schema with id "+id+" not found", apierr.P("schemaId", id))
}

func badRequest(msg string) error { return apierr.New(apierr.BadRequest, msg) }

func checkSchemaName(name string) error {
	if n := len([]rune(name)); n < 1 || n > MaxSchemaNameLen {
		return badRequest("String length of the schema name is outside of the bounds [1,1024]")
	}
	return nil
}

// checkID requires a time-based (v1) UUID (the UI reads the creation time
// from it).
func checkID(id string) error {
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 1 {
		return apierr.New(apierr.BadRequest, "schemaId "+strconv.Quote(id)+" is not a time-based (version 1) UUID",
			apierr.P("schemaId", id))
	}
	return nil
}

// loadedModel is a model with its parsed shape and API identity.
type loadedModel struct {
	rec *storage.Model
	ref ModelRef
	im  *infer.Model
}

func (s *Service) parse(m *storage.Model) (*loadedModel, error) {
	im := infer.NewModel()
	if len(m.Schema) > 0 {
		lim := infer.DefaultLimits()
		lim.MaxFields *= 64
		lim.MaxBytes = 1 << 30
		var err error
		if im, err = infer.ParseSimpleView(m.Schema, lim); err != nil {
			return nil, fmt.Errorf("decoding stored model %s:%d: %w", m.Key.Name, m.Key.Version, err)
		}
	}
	return &loadedModel{rec: m, im: im, ref: ModelRef{ID: s.modelID(m.Key), Name: m.Key.Name,
		Version: m.Key.Version, UpdatedMs: m.UpdatedAt.UnixMilli()}}, nil
}

// modelByID finds a tenant's model by its API id.
func (s *Service) modelByID(ctx context.Context, tenant, id string) (*loadedModel, error) {
	ms, err := s.models.ListModels(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	for _, m := range ms {
		if s.modelID(m.Key) == id {
			return s.parse(m)
		}
	}
	return nil, apierr.New(apierr.ModelNotFound, "Entity model with id "+id+" not found", apierr.P("entityModelId", id))
}

// GenTables is GET /sql/schema/genTables/{entityModelId}.
func (s *Service) GenTables(ctx context.Context, tenant, modelID string) ([]TableConfig, error) {
	m, err := s.modelByID(ctx, tenant, modelID)
	if err != nil {
		return nil, err
	}
	return GenTables(m.ref, m.im), nil
}

// UpdateTables is POST /sql/schema/updateTables/{entityModelId}.
func (s *Service) UpdateTables(ctx context.Context, tenant, modelID string, body []byte) ([]TableConfig, error) {
	var mine []TableConfig
	if err := json.Unmarshal(body, &mine); err != nil {
		return nil, badRequest("the body must be a JSON array of table configurations: " + err.Error())
	}
	m, err := s.modelByID(ctx, tenant, modelID)
	if err != nil {
		return nil, err
	}
	return MergeTables(mine, GenTables(m.ref, m.im), m.ref.UpdatedMs), nil
}

// Save is POST /sql/schema/: upsert by name; the body's id is ignored.
func (s *Service) Save(ctx context.Context, tenant string, body []byte) (string, error) {
	var in struct {
		SchemaName *string          `json:"schemaName"`
		Tables     *json.RawMessage `json:"tables"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return "", badRequest("the body must be a SchemaConfigDto JSON object: " + err.Error())
	}
	if in.SchemaName == nil {
		return "", badRequest("schemaName is required")
	}
	if err := checkSchemaName(*in.SchemaName); err != nil {
		return "", err
	}
	if in.Tables == nil || string(*in.Tables) == "null" {
		return "", badRequest("tables is required (a JSON array of table configurations)")
	}
	var tables []TableConfig
	if err := json.Unmarshal(*in.Tables, &tables); err != nil {
		return "", badRequest("tables must be a JSON array of table configurations: " + err.Error())
	}
	rec, err := s.save(ctx, tenant, *in.SchemaName, tables, http400)
	if err != nil {
		return "", err
	}
	return rec.ID, nil
}

var (
	http400 = apierr.BadRequest
	http422 = apierr.SQLNameClash
)

// save validates tables against the tenant's current models, resolves the
// views and stores the schema.
func (s *Service) save(ctx context.Context, tenant, name string, tables []TableConfig, invalidCode apierr.Code) (*storage.SQLSchema, error) {
	ms, err := s.models.ListModels(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	byID := map[string]*storage.Model{}
	for _, m := range ms {
		byID[s.modelID(m.Key)] = m
	}
	fresh := map[string][]TableConfig{}
	for _, t := range tables {
		if _, done := fresh[t.MetadataClassID]; done {
			continue
		}
		m := byID[t.MetadataClassID]
		if m == nil {
			return nil, apierr.New(apierr.ModelNotFound, "table "+strconv.Quote(t.TableName)+": entity model with id "+
				t.MetadataClassID+" not found", apierr.P("entityModelId", t.MetadataClassID))
		}
		lm, err := s.parse(m)
		if err != nil {
			return nil, err
		}
		fresh[t.MetadataClassID] = GenTables(lm.ref, lm.im)
	}
	if err := checkTables(tables, fresh); err != nil {
		return nil, apierr.New(invalidCode, err.Error(), apierr.P("schemaName", name))
	}
	raw, err := json.Marshal(tables)
	if err != nil {
		return nil, fmt.Errorf("encoding tables: %w", err)
	}
	keys := map[string]storage.ModelKey{}
	for id, m := range byID {
		keys[id] = m.Key
	}
	isNew, err := s.roomForSchema(ctx, tenant, name)
	if err != nil {
		return nil, err
	}
	rec := &storage.SQLSchema{Tenant: tenant, ID: newID(), Name: name, Tables: raw}
	if err := s.schemas.SaveSQLSchema(ctx, rec, Views(tables, keys)); err != nil {
		var re *storage.SQLRightsError
		if errors.As(err, &re) {
			return nil, rightsNotRevoked(re)
		}
		var de *storage.SQLDatabaseError
		if errors.As(err, &de) {
			return nil, databaseUnavailable(de)
		}
		return nil, fmt.Errorf("saving SQL schema %q: %w", name, err)
	}
	if isNew && s.maxSchemas > 0 {
		// Two new schemas saved at once may both have passed the check:
		// count again, and take this one back if it went over (both may
		// then answer 409; never more than the bound stays).
		n, err := s.countSchemas(ctx, tenant)
		if err != nil {
			return nil, err
		}
		if n > s.maxSchemas {
			if err := s.schemas.DeleteSQLSchema(ctx, tenant, rec.ID); err != nil && !errors.Is(err, storage.ErrNotFound) {
				return nil, fmt.Errorf("taking back SQL schema %q over the bound: %w", name, err)
			}
			return nil, s.schemaLimit()
		}
	}
	return rec, nil
}

// MoveLegacy saves again, as they are, the schemas an engine keeps in an
// older layout (storage.SQLSchemasToMove; on PostgreSQL those saved before
// each schema had a database of its own, docs/decisions/0033-sql-tenant-isolation.md),
// with the views their tables give over the tenant's current models. It
// returns how many moved; a schema that fails stays where it was (and is
// tried again at the next start), and the first error is returned.
func (s *Service) MoveLegacy(ctx context.Context) (moved int, err error) {
	l, ok := s.schemas.(storage.SQLSchemasToMove)
	if !ok {
		return 0, nil
	}
	recs, err := l.SQLSchemasToMove(ctx)
	if err != nil {
		return 0, err
	}
	for _, rec := range recs {
		if ctx.Err() != nil {
			return moved, ctx.Err()
		}
		var tables []TableConfig
		if e := json.Unmarshal(rec.Tables, &tables); e != nil {
			err = cmp.Or(err, fmt.Errorf("SQL schema %q of tenant %q: %w", rec.Name, rec.Tenant, e))
			continue
		}
		ms, e := s.models.ListModels(ctx, rec.Tenant)
		if e != nil {
			err = cmp.Or(err, fmt.Errorf("SQL schema %q of tenant %q: listing models: %w", rec.Name, rec.Tenant, e))
			continue
		}
		keys := map[string]storage.ModelKey{}
		for _, m := range ms {
			keys[s.modelID(m.Key)] = m.Key
		}
		if e := s.schemas.SaveSQLSchema(ctx, rec, Views(tables, keys)); e != nil {
			err = cmp.Or(err, fmt.Errorf("SQL schema %q of tenant %q: %w", rec.Name, rec.Tenant, e))
			continue
		}
		moved++
	}
	return moved, err
}

// rightsNotRevoked is the answer when svc's database still grants PUBLIC
// what a schema role must not hold (docs/decisions/0033-sql-tenant-isolation.md):
// nothing was saved, and only an operator can fix it.
func rightsNotRevoked(re *storage.SQLRightsError) error {
	return apierr.New(apierr.SQLRoleRightsNotRevoked, "SQL access is refused: in svc's database PUBLIC still holds "+strings.Join(re.Left, ", ")+
		"; an operator must apply "+strings.Join(re.Migrations, " and ")+" to svc's database as a PostgreSQL superuser (svc's role was not one when it migrated; they give the rights back to svc's role, the owner of its tables), then save again",
		apierr.P("left", re.Left), apierr.P("migrations", re.Migrations))
}

// databaseUnavailable is the answer when svc cannot give the schema a
// PostgreSQL database of its own (docs/decisions/0033-sql-tenant-isolation.md):
// nothing was saved, and svc does not fall back to views in its own
// database, where other tenants' roles could list their names.
func databaseUnavailable(de *storage.SQLDatabaseError) error {
	return apierr.New(apierr.SQLDatabaseUnavailable, "SQL access is refused: each SQL schema gets a PostgreSQL database of its own, reaching the entities through postgres_fdw, and that needs "+
		de.Need+" ("+de.Detail+"); an operator grants it to svc's role, then the schema is saved again", apierr.P("need", de.Need))
}

func (s *Service) schemaLimit() error {
	return apierr.New(apierr.SQLSchemaLimitReached, "the tenant has "+strconv.Itoa(s.maxSchemas)+" SQL schemas, the most SVC_SQL_MAX_SCHEMAS_PER_TENANT allows; "+
		"delete one or replace an existing schema by name", apierr.P("setting", "SVC_SQL_MAX_SCHEMAS_PER_TENANT"), apierr.P("limit", s.maxSchemas))
}

func (s *Service) countSchemas(ctx context.Context, tenant string) (int, error) {
	rs, err := s.schemas.ListSQLSchemas(ctx, tenant)
	if err != nil {
		return 0, fmt.Errorf("listing SQL schemas: %w", err)
	}
	return len(rs), nil
}

// roomForSchema reports whether name is a new schema of tenant, refusing
// it when the tenant is at SVC_SQL_MAX_SCHEMAS_PER_TENANT. Replacing an
// existing schema is always allowed.
func (s *Service) roomForSchema(ctx context.Context, tenant, name string) (isNew bool, err error) {
	_, err = s.schemas.GetSQLSchemaByName(ctx, tenant, name)
	switch {
	case err == nil:
		return false, nil
	case !errors.Is(err, storage.ErrNotFound):
		return false, fmt.Errorf("reading SQL schema %q: %w", name, err)
	case s.maxSchemas <= 0:
		return true, nil
	}
	n, err := s.countSchemas(ctx, tenant)
	if err != nil {
		return false, err
	}
	if n >= s.maxSchemas {
		return false, s.schemaLimit()
	}
	return true, nil
}

func newID() string {
	u, err := uuid.NewUUID()
	if err != nil {
		// NewUUID fails only when the clock or node id cannot be read; a
		// random node keeps the id time-based.
		uuid.SetNodeID(uuid.NodeID())
		u = uuid.Must(uuid.NewUUID())
	}
	return u.String()
}

// PutDefault is PUT /sql/schema/putDefault/{schemaName}: every model of
// the tenant that has a schema, genTables each, one schema. UNLOCKED
// models' tables are saved hidden (docs/decisions/0024-sql-schema.md).
func (s *Service) PutDefault(ctx context.Context, tenant, name string) (*SchemaConfig, error) {
	if err := checkSchemaName(name); err != nil {
		return nil, err
	}
	ms, err := s.models.ListModels(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	var tables []TableConfig
	names := uniqueNames{}
	for _, m := range ms {
		if len(m.Schema) == 0 {
			continue
		}
		lm, err := s.parse(m)
		if err != nil {
			return nil, err
		}
		for _, t := range GenTables(lm.ref, lm.im) {
			t.TableName = names.take(t.TableName)
			t.Hidden = m.State != "LOCKED"
			tables = append(tables, t)
		}
	}
	sortTables(tables)
	if tables == nil {
		tables = []TableConfig{}
	}
	rec, err := s.save(ctx, tenant, name, tables, http422)
	if err != nil {
		return nil, err
	}
	return &SchemaConfig{ID: rec.ID, SchemaName: name, Tables: tables}, nil
}

func toConfig(r *storage.SQLSchema) (*SchemaConfig, error) {
	c := &SchemaConfig{ID: r.ID, SchemaName: r.Name}
	if err := json.Unmarshal(r.Tables, &c.Tables); err != nil {
		return nil, fmt.Errorf("decoding stored SQL schema %s: %w", r.ID, err)
	}
	if c.Tables == nil {
		c.Tables = []TableConfig{}
	}
	sortTables(c.Tables)
	return c, nil
}

// Get is GET /sql/schema/{schemaId}.
func (s *Service) Get(ctx context.Context, tenant, id string) (*SchemaConfig, error) {
	r, err := s.byID(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	return toConfig(r)
}

func (s *Service) byID(ctx context.Context, tenant, id string) (*storage.SQLSchema, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	r, err := s.schemas.GetSQLSchema(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, schemaNotFoundByID(id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading SQL schema %s: %w", id, err)
	}
	return r, nil
}

func (s *Service) byName(ctx context.Context, tenant, name string) (*storage.SQLSchema, error) {
	r, err := s.schemas.GetSQLSchemaByName(ctx, tenant, name)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, schemaNotFoundByName(name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading SQL schema %q: %w", name, err)
	}
	return r, nil
}

// GetByName is GET /sql/schema/?schemaName=.
func (s *Service) GetByName(ctx context.Context, tenant, name string) (*SchemaConfig, error) {
	r, err := s.byName(ctx, tenant, name)
	if err != nil {
		return nil, err
	}
	return toConfig(r)
}

// List is GET /sql/schema/listAll.
func (s *Service) List(ctx context.Context, tenant string) ([]*SchemaConfig, error) {
	rs, err := s.schemas.ListSQLSchemas(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("listing SQL schemas: %w", err)
	}
	out := make([]*SchemaConfig, 0, len(rs))
	for _, r := range rs {
		c, err := toConfig(r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// inUse is the 409 of a schema whose role cannot be dropped yet, or nil
// when err is another failure.
func inUse(err error, which apierr.Prop) error {
	var iu *storage.SQLSchemaInUseError
	if !errors.As(err, &iu) {
		return nil
	}
	return apierr.New(apierr.SQLSchemaInUse, "the SQL schema was not deleted: "+iu.Reason, which, apierr.P("reason", iu.Reason))
}

// Delete is DELETE /sql/schema/{schemaId}.
func (s *Service) Delete(ctx context.Context, tenant, id string) (string, error) {
	if _, err := s.byID(ctx, tenant, id); err != nil {
		return "", err
	}
	if err := s.schemas.DeleteSQLSchema(ctx, tenant, id); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return "", schemaNotFoundByID(id)
		}
		if e := inUse(err, apierr.P("schemaId", id)); e != nil {
			return "", e
		}
		return "", fmt.Errorf("deleting SQL schema %s: %w", id, err)
	}
	return "SQL Schema with id " + id + " deleted", nil
}

// DeleteByName is DELETE /sql/schema/?schemaName=.
func (s *Service) DeleteByName(ctx context.Context, tenant, name string) (string, error) {
	r, err := s.byName(ctx, tenant, name)
	if err != nil {
		return "", err
	}
	if err := s.schemas.DeleteSQLSchema(ctx, tenant, r.ID); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return "", schemaNotFoundByName(name)
		}
		if e := inUse(err, apierr.P("schemaName", name)); e != nil {
			return "", e
		}
		return "", fmt.Errorf("deleting SQL schema %q: %w", name, err)
	}
	return "SQL Schema with name " + name + " deleted", nil
}
