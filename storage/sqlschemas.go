package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrSQLNeedsPostgres: the engine keeps SQL schemas as configuration only
// and cannot run SQL over them (the memory engine).
var ErrSQLNeedsPostgres = errors.New("storage: SQL queries need the PostgreSQL engine")

// SQLSchema is a saved SQL schema: its name, its table configurations as
// the JSON the client saved (round-tripped verbatim) and the views built
// from them.
type SQLSchema struct {
	Tenant    string
	ID        string // time-based (v1) UUID
	Name      string
	Tables    []byte // JSON array of TableConfigDto
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SQLView is one visible table of a saved schema, resolved for the engine:
// a view over one node of one model.
type SQLView struct {
	Name    string // PostgreSQL identifier (≤ 63 bytes)
	Model   ModelKey
	Path    string // uniformedPath: "$", "$.a[*]", "$.a[*]^", "json"
	Columns []SQLColumn
}

// SQLColumn is one view column. Flattened arrays arrive already expanded
// into one column per position.
type SQLColumn struct {
	Name     string // PostgreSQL identifier
	Category string // SPECIAL, ROOT, INDEX, DATA
	// Key is the field key: ENTITY_ID, POINT_TIME, JSON; creationDate,
	// lastUpdateTime, state; an index position "0"… (or "" for the whole
	// index as an array); a node-relative data key ".a.b", ".a[2]",
	// ".a[*]" (the whole array), "[2]" or "[*]" (detached elements).
	Key      string
	DataType string
	Array    bool // the column is an array of DataType
}

// SQLSchemas stores SQL schemas per tenant. Names are unique per tenant.
type SQLSchemas interface {
	GetSQLSchema(ctx context.Context, tenant, id string) (*SQLSchema, error)
	GetSQLSchemaByName(ctx context.Context, tenant, name string) (*SQLSchema, error)
	ListSQLSchemas(ctx context.Context, tenant string) ([]*SQLSchema, error)
	// SaveSQLSchema upserts by (tenant, name): an existing schema keeps its
	// id and creation time and s.ID is set to it. The views are (re)built
	// in the same transaction where the engine has views.
	SaveSQLSchema(ctx context.Context, s *SQLSchema, views []SQLView) error
	// DeleteSQLSchema removes the schema and its views.
	DeleteSQLSchema(ctx context.Context, tenant, id string) error
}

// SQLQuery is a read-only statement over one saved schema's views.
type SQLQuery struct {
	Tenant   string
	SchemaID string
	SQL      string
	// PointTime, when set, reads every view as of that instant.
	PointTime *time.Time
	Timeout   time.Duration
}

// SQLRightsError: PUBLIC still holds, in svc's database, rights a SQL
// schema role must not have (the revocations of migrations 0034 and 0035
// only take effect when run by a superuser), so SQL access is refused.
// Left names each right; Migrations the files to apply.
type SQLRightsError struct {
	Left       []string
	Migrations []string
}

func (e *SQLRightsError) Error() string {
	return "storage: refusing SQL access: PUBLIC still holds " + strings.Join(e.Left, ", ") +
		" in this database; apply " + strings.Join(e.Migrations, " and ") + " as a superuser"
}

// SQLSchemasToMove is implemented by engines whose older saved schemas
// need rebuilding in a newer layout (PostgreSQL: views still in svc's own
// database, from before each schema had a database of its own); the SQL
// Schema service saves each one again at start.
type SQLSchemasToMove interface {
	SQLSchemasToMove(ctx context.Context) ([]*SQLSchema, error)
}

// SQLDatabaseError: svc cannot give a SQL schema a database of its own
// (docs/decisions/0033-sql-tenant-isolation.md) because its PostgreSQL
// role lacks what that takes (CREATEDB, the postgres_fdw extension);
// Need names it. Nothing was saved.
type SQLDatabaseError struct {
	Need   string
	Detail string
}

func (e *SQLDatabaseError) Error() string {
	return "storage: a SQL schema's own database needs " + e.Need + ": " + e.Detail
}

// SQLCursor is an open query result. Next returns the next row (nil at
// the end) in the neutral value model; Close releases the connection and
// must always be called.
type SQLCursor interface {
	Columns() []string
	Next() ([]SQLValue, error)
	Close()
}

// SQLRunner runs SQL over saved schemas and manages each schema's
// read-only login role. Engines without SQL return ErrSQLNeedsPostgres.
type SQLRunner interface {
	// OpenSQL starts q; errors in the statement itself are
	// *SQLStatementError. ctx bounds the cursor's whole life.
	OpenSQL(ctx context.Context, q SQLQuery) (SQLCursor, error)
	// SQLCredentials returns the login of a schema's role: the role name,
	// the PostgreSQL schema of its views and a password, issuing a new
	// password when rotate is set or none was issued yet.
	SQLCredentials(ctx context.Context, tenant, schemaID string, rotate bool) (SQLLogin, error)
}

// SQLLogin is how a BI tool or psql connects to a schema's views.
type SQLLogin struct {
	Role     string `json:"role"`
	Password string `json:"password"`
	Schema   string `json:"schema"`
	Database string `json:"database"`
}

// SQLStatementError is PostgreSQL refusing a user's statement (syntax,
// permission, timeout…): the client's fault, shown with the server's
// message.
type SQLStatementError struct {
	Code    string // SQLSTATE
	Message string
}

func (e *SQLStatementError) Error() string { return e.Message + " (SQLSTATE " + e.Code + ")" }

// SQLBusyError: running the query would pass a bound on the connections
// svc makes for SQL schema roles. Tenant says which: the tenant's own
// bound (the caller should slow down: 429) or svc's total (503). Either
// way no connection was taken and nothing waited; the query may be
// retried.
type SQLBusyError struct {
	Setting string // the setting whose bound was reached
	Limit   int
	Tenant  bool
}

func (e *SQLBusyError) Error() string {
	return fmt.Sprintf("storage: %s (%d) SQL connections are in use", e.Setting, e.Limit)
}

// SQLSchemaInUseError: a SQL schema's role cannot be dropped yet (it owns
// objects, or has sessions svc could not end); Reason says which.
type SQLSchemaInUseError struct {
	Reason string
}

func (e *SQLSchemaInUseError) Error() string { return "storage: SQL schema in use: " + e.Reason }
