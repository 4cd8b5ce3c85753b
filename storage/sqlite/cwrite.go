package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"strconv"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// The writer's statements without rows (every INSERT, UPDATE and DELETE of
// every job, and BEGIN, SAVEPOINT, RELEASE, COMMIT) run through SQLite's C
// interface on the writer's own connection, as the point reads do
// (fastread.go): prepared once, bound by position from a C buffer, stepped
// and reset. Through database/sql and the driver, each execution went
// through a pool lookup, a conversion pass, a C string per bound text and
// the name of every parameter read back from SQLite to match it to its
// argument: a tenth of a served single create's CPU. Reads inside a job
// (queryRow, query) still use the driver's statements on the same
// connection: one connection, one transaction.
//
// The driver does not give out its connection's sqlite3*: rawDB reads it
// from the driver's connection value. When it cannot (the driver's type
// changed), the writer keeps executing through the driver, and
// TestWriterCPath fails so the change is seen.

// rawDB is the sqlite3* of the driver connection behind c, 0 when it
// cannot be read.
func rawDB(ctx context.Context, c *sql.Conn) uintptr {
	var db uintptr
	_ = c.Raw(func(dc any) error {
		v := reflect.ValueOf(dc)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return nil
		}
		if f := v.Elem().FieldByName("db"); f.IsValid() && f.Kind() == reflect.Uintptr {
			db = uintptr(f.Uint())
		}
		return nil
	})
	return db
}

// newCWriter wraps the writer connection's sqlite3* (nil when rawDB found
// none). The connection stays the driver's: closing it is the driver's,
// finalizing the statements prepared here the writer's (before it).
func newCWriter(ctx context.Context, c *sql.Conn) *rconn {
	db := rawDB(ctx, c)
	if db == 0 {
		return nil
	}
	return &rconn{tls: libc.NewTLS(), db: db, stmts: map[string]*cstmt{}}
}

var errCUnsupported = errors.New("sqlite: not executable through the C interface")

// cresult is an execution's sql.Result.
type cresult struct{ id, n int64 }

func (r cresult) LastInsertId() (int64, error) { return r.id, nil }
func (r cresult) RowsAffected() (int64, error) { return r.n, nil }

// prepareExec is prepare for run: errCUnsupported when query is more than
// one statement or names a parameter otherwise than ?N at position N (run
// binds by position; the driver matches names).
func (rc *rconn) prepareExec(query string) (*cstmt, error) {
	if s := rc.stmts[query]; s != nil {
		if s.p == 0 {
			return nil, errCUnsupported
		}
		return s, nil
	}
	z, err := libc.CString(query)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(rc.tls, z)
	pp := libc.Xmalloc(rc.tls, types.Size_t(2*unsafe.Sizeof(uintptr(0))))
	if pp == 0 {
		return nil, errors.New("sqlite: out of memory")
	}
	defer libc.Xfree(rc.tls, pp)
	*(*[2]uintptr)(cptr(pp)) = [2]uintptr{}
	tail := pp + unsafe.Sizeof(uintptr(0))
	if code := sqlite3.Xsqlite3_prepare_v2(rc.tls, rc.db, z, -1, pp, tail); code != sqlite3.SQLITE_OK {
		// The driver reports it as it always did.
		return nil, errCUnsupported
	}
	p := *(*uintptr)(cptr(pp))
	ok := p != 0
	if t := *(*uintptr)(cptr(tail)); ok && t != 0 {
		for _, c := range libc.GoString(t) {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ';' {
				ok = false
				break
			}
		}
	}
	for i := int32(1); ok && i <= sqlite3.Xsqlite3_bind_parameter_count(rc.tls, p); i++ {
		if name := libc.GoString(sqlite3.Xsqlite3_bind_parameter_name(rc.tls, p, i)); name != "" && name != "?"+strconv.Itoa(int(i)) {
			ok = false
		}
	}
	if !ok {
		if p != 0 {
			sqlite3.Xsqlite3_finalize(rc.tls, p)
		}
		rc.stmts[query] = &cstmt{} // remembered: the driver runs it
		return nil, errCUnsupported
	}
	s := &cstmt{p: p}
	rc.stmts[query] = s
	return s, nil
}

// run executes query with args[i] bound to parameter i+1, stepping past
// any rows; errCUnsupported when the statement or an argument must go
// through the driver instead (nothing was executed then).
func (rc *rconn) run(query string, args []any) (sql.Result, error) {
	s, err := rc.prepareExec(query)
	if err != nil {
		return nil, err
	}
	if n := int(sqlite3.Xsqlite3_bind_parameter_count(rc.tls, s.p)); len(args) != n {
		return nil, errCUnsupported // the driver's own error, or its leniency
	}
	if err := rc.bind(s, args); err != nil {
		sqlite3.Xsqlite3_clear_bindings(rc.tls, s.p)
		return nil, err
	}
	for {
		switch code := sqlite3.Xsqlite3_step(rc.tls, s.p); code {
		case sqlite3.SQLITE_ROW:
		case sqlite3.SQLITE_DONE:
			r := cresult{sqlite3.Xsqlite3_last_insert_rowid(rc.tls, rc.db), sqlite3.Xsqlite3_changes64(rc.tls, rc.db)}
			sqlite3.Xsqlite3_reset(rc.tls, s.p)
			return r, nil
		default:
			err := rc.errstr(code)
			sqlite3.Xsqlite3_reset(rc.tls, s.p)
			return nil, err
		}
	}
}

// release finalizes the statements and frees the thread state; the
// connection is left to the driver.
func (rc *rconn) release() {
	rc.finalize()
	rc.tls.Close()
}
