package postgres

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"svc/storage"
)

// POST /sql/query runs as the schema's own login role on a connection
// made as that role (sqlschema_pool.go).

func newPassword() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("postgres: generating a role password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// login reads a schema's role, issuing a password when rotate is set or
// none was issued yet.
func (s *SQLSchemas) login(ctx context.Context, tenant, id string, rotate bool) (storage.SQLLogin, error) {
	var l storage.SQLLogin
	c, err := s.db.acquire(ctx)
	if err != nil {
		return l, err
	}
	defer c.Release()
	if !rotate {
		// The common case: a password was issued; one read, no row lock.
		var pw *string
		err := c.QueryRow(ctx, `SELECT pg_schema, pg_role, role_password, coalesce(pg_database, current_database()) FROM sql_schemas
			WHERE tenant = $1 AND id = $2::uuid`, tenant, id).Scan(&l.Schema, &l.Role, &pw, &l.Database)
		if err != nil {
			return l, notFoundOr(err, "read SQL schema role")
		}
		if pw != nil {
			l.Password = *pw
			return l, nil
		}
	}
	err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		var pw *string
		err := tx.QueryRow(ctx, `SELECT pg_schema, pg_role, role_password, coalesce(pg_database, current_database()) FROM sql_schemas
			WHERE tenant = $1 AND id = $2::uuid FOR UPDATE`, tenant, id).Scan(&l.Schema, &l.Role, &pw, &l.Database)
		if err != nil {
			return notFoundOr(err, "read SQL schema role")
		}
		if pw != nil && !rotate {
			l.Password = *pw
			return nil
		}
		if l.Password, err = newPassword(); err != nil {
			return err
		}
		// The password is generated base64url text, safe as a literal.
		if _, err := tx.Exec(ctx, "ALTER ROLE "+ident(l.Role)+" PASSWORD "+literal(l.Password)); err != nil {
			return fmt.Errorf("postgres: setting the SQL role password: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE sql_schemas SET role_password = $3 WHERE tenant = $1 AND id = $2::uuid`,
			tenant, id, l.Password); err != nil {
			return fmt.Errorf("postgres: storing the SQL role password: %w", err)
		}
		return nil
	})
	return l, err
}

func (s *SQLSchemas) SQLCredentials(ctx context.Context, tenant, id string, rotate bool) (storage.SQLLogin, error) {
	l, err := s.login(ctx, tenant, id, rotate)
	if err == nil && rotate {
		s.db.rolePools().forget(l.Role)
	}
	return l, err
}

// OpenSQL runs one statement read-only as the schema's role. The
// extended protocol refuses more than one statement; BEGIN READ ONLY and
// the role's lack of write grants keep it a read. The first row is read
// before returning, so errors that surface early are still the caller's
// to report as such.
func (s *SQLSchemas) OpenSQL(ctx context.Context, q storage.SQLQuery) (storage.SQLCursor, error) {
	l, err := s.login(ctx, q.Tenant, q.SchemaID, false)
	if err != nil {
		return nil, err
	}
	c, err := s.db.rolePools().acquire(ctx, s.db.opt.URL, q.Tenant, l.Role, l.Password, l.Schema, l.Database)
	if err != nil {
		return nil, err
	}
	cur := &sqlCursor{conn: c}
	if err := cur.start(ctx, q); err != nil {
		cur.Close()
		return nil, err
	}
	return cur, nil
}

type sqlCursor struct {
	conn  *roleConn
	inTx  bool
	rows  pgx.Rows
	cols  []string
	conv  []*sqlColumn
	first []storage.SQLValue
	done  bool
}

func (c *sqlCursor) start(ctx context.Context, q storage.SQLQuery) error {
	timeout := q.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	pt := ""
	if q.PointTime != nil {
		pt = q.PointTime.UTC().Format(time.RFC3339Nano)
	}
	// One round trip opens the read-only transaction and applies the
	// settings; both values are formatted here (a number, an RFC 3339
	// instant), never taken from the request text. JIT is off: the views'
	// inlined extraction expressions made it compile for longer than the
	// query ran (a GROUP BY over 100k root rows).
	c.inTx = true
	if _, err := c.conn.Exec(ctx, fmt.Sprintf("BEGIN READ ONLY; SET LOCAL statement_timeout = %d; SET LOCAL jit = off; %s; SELECT set_config('svc.point_time', %s, true)",
		timeout.Milliseconds(), sqlOutputSettings, literal(pt)), pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("postgres: begin SQL query: %w", err)
	}
	rows, err := c.conn.Query(ctx, q.SQL, pgx.QueryExecModeDescribeExec, sqlTextResults)
	if err != nil {
		return statementError(err)
	}
	c.rows = rows
	for _, fd := range rows.FieldDescriptions() {
		c.cols = append(c.cols, fd.Name)
	}
	c.conv = sqlColumnsOf(rows.FieldDescriptions())
	first, err := c.next()
	if err != nil {
		return err
	}
	c.first = first
	return nil
}

func (c *sqlCursor) Columns() []string { return c.cols }

func (c *sqlCursor) next() ([]storage.SQLValue, error) {
	if c.done {
		return nil, nil
	}
	if !c.rows.Next() {
		c.done = true
		if err := c.rows.Err(); err != nil {
			return nil, statementError(err)
		}
		return nil, nil
	}
	raw := c.rows.RawValues()
	vals := make([]storage.SQLValue, len(raw))
	for i, b := range raw {
		vals[i] = c.conv[i].value(b)
	}
	return vals, nil
}

func (c *sqlCursor) Next() ([]storage.SQLValue, error) {
	if c.first != nil {
		r := c.first
		c.first = nil
		return r, nil
	}
	return c.next()
}

func (c *sqlCursor) Close() {
	if c.rows != nil {
		c.rows.Close()
	}
	if c.inTx {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.conn.Exec(ctx, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
		if err == nil {
			err = resetSession(ctx, c.conn.Conn())
		}
		if err != nil {
			// A connection whose state is unknown is not reused.
			_ = c.conn.Conn().Close(ctx)
		}
		cancel()
	}
	c.conn.Release()
}

// statementError reports PostgreSQL's refusal of the user's statement as a
// storage.SQLStatementError; other failures stay internal.
func statementError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &storage.SQLStatementError{Code: pe.Code, Message: pe.Message}
	}
	return fmt.Errorf("postgres: SQL query: %w", err)
}
