package sqlschema

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/storage"
)

// MaxQueryBytes bounds the SQL text of POST /sql/query.
const MaxQueryBytes = 1 << 20

// QueryRequest is the body of POST /sql/query (an svc extension).
type QueryRequest struct {
	SchemaName string `json:"schemaName"`
	SQL        string `json:"sql"`
	// PointTime, an RFC 3339 instant, reads every view as of then.
	PointTime string `json:"pointTime,omitempty"`
}

func needsPostgres() error {
	return apierr.New(apierr.NotImplementedByBackend, "SQL queries and SQL logins need the PostgreSQL storage backend "+
		"(SVC_STORAGE_BACKEND=postgres); the memory and sqlite backends keep SQL schema configuration only")
}

func (s *Service) runnerErr(err error) error {
	var se *storage.SQLStatementError
	var be *storage.SQLBusyError
	switch {
	case errors.As(err, &be):
		return busy(be)
	case errors.Is(err, storage.ErrSQLNeedsPostgres):
		return needsPostgres()
	case errors.As(err, &se):
		return apierr.New(apierr.SQLError, se.Message, apierr.P("sqlState", se.Code))
	}
	return err
}

// busy is the answer to a query past a connection bound: 429 when the
// tenant's own bound is reached, 503 when svc's total is; both retryable
// (the handler adds Retry-After).
func busy(be *storage.SQLBusyError) error {
	code, who := apierr.SQLConnectionsBusy, "svc's SQL connections"
	if be.Tenant {
		code, who = apierr.SQLTenantConnectionsBusy, "this tenant's SQL connections"
	}
	msg := "all " + who + " are in use (" + be.Setting
	if be.Limit > 0 {
		msg += " = " + strconv.Itoa(be.Limit)
	}
	e := apierr.New(code, msg+"); retry shortly", apierr.P("setting", be.Setting))
	e.Retryable = true
	return e
}

// Query is POST /sql/query: one read-only statement over the views of one
// saved schema, as the schema's role. The caller must Close the cursor.
func (s *Service) Query(ctx context.Context, tenant string, body []byte) (storage.SQLCursor, error) {
	if s.runner == nil {
		return nil, needsPostgres()
	}
	var in QueryRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, badRequest("the body must be a JSON object {schemaName, sql, pointTime?}: " + err.Error())
	}
	if err := checkSchemaName(in.SchemaName); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.SQL) == "" || len(in.SQL) > MaxQueryBytes {
		return nil, badRequest("sql must hold one SQL statement of at most 1 MiB")
	}
	q := storage.SQLQuery{Tenant: tenant, SQL: in.SQL, Timeout: s.queryTimeout}
	if in.PointTime != "" {
		t, err := time.Parse(time.RFC3339Nano, in.PointTime)
		if err != nil || !storage.InstantInRange(t) {
			return nil, apierr.New(apierr.BadRequest, "pointTime must be an RFC 3339 instant "+storage.InstantRangeText,
				apierr.P("field", "pointTime"), apierr.P("pointTime", in.PointTime))
		}
		q.PointTime = &t
	}
	r, err := s.byName(ctx, tenant, in.SchemaName)
	if err != nil {
		return nil, err
	}
	q.SchemaID = r.ID
	cur, err := s.runner.OpenSQL(ctx, q)
	if err != nil {
		return nil, s.runnerErr(err)
	}
	return cur, nil
}

// RowError maps an error met while streaming rows.
func (s *Service) RowError(err error) error { return s.runnerErr(err) }

// Credentials returns (rotate: reissues) the login of a schema's
// read-only PostgreSQL role.
func (s *Service) Credentials(ctx context.Context, tenant, schemaName string, rotate bool) (storage.SQLLogin, error) {
	if s.runner == nil {
		return storage.SQLLogin{}, needsPostgres()
	}
	r, err := s.byName(ctx, tenant, schemaName)
	if err != nil {
		return storage.SQLLogin{}, err
	}
	l, err := s.runner.SQLCredentials(ctx, tenant, r.ID, rotate)
	if errors.Is(err, storage.ErrNotFound) {
		return l, schemaNotFoundByName(schemaName)
	}
	if err != nil {
		return l, s.runnerErr(err)
	}
	return l, nil
}
