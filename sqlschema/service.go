package sqlschema

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/infer"
	"svc/platform/apierr"
	"svc/storage"
)

// Error codes of the SQL Schema API beyond the common catalogue.
const (
	// apierr.SQLNameClash: putDefault met duplicate table or field names (422).
	// apierr.SQLError: PostgreSQL refused a statement of POST /sql/query (400).
	// apierr.NotImplementedByBackend: the engine keeps configuration only (501).
)

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
}

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
	rec := &storage.SQLSchema{Tenant: tenant, ID: newID(), Name: name, Tables: raw}
	if err := s.schemas.SaveSQLSchema(ctx, rec, Views(tables, keys)); err != nil {
		return nil, fmt.Errorf("saving SQL schema %q: %w", name, err)
	}
	return rec, nil
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

// Delete is DELETE /sql/schema/{schemaId}.
func (s *Service) Delete(ctx context.Context, tenant, id string) (string, error) {
	if _, err := s.byID(ctx, tenant, id); err != nil {
		return "", err
	}
	if err := s.schemas.DeleteSQLSchema(ctx, tenant, id); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return "", schemaNotFoundByID(id)
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
		return "", fmt.Errorf("deleting SQL schema %q: %w", name, err)
	}
	return "SQL Schema with name " + name + " deleted", nil
}
