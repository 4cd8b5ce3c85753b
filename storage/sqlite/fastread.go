package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"

	"svc/storage"
)

// The point reads (get by id, as at, by transaction) bypass database/sql
// and the driver: each takes a connection of a pool of its own, opened
// through SQLite's C interface (the transpiled modernc.org/sqlite/lib), and
// runs a statement prepared once per connection: bind, step, read the
// columns, reset. database/sql added a pool lookup, a goroutine watching
// the request's context and a conversion pass per read; the driver copied
// and upper-cased every column's name and declared type per query; and a
// connection opened by the driver is serialized by SQLite's own mutex on
// every call. A connection here is used by one goroutine at a time (the
// pool's channel hands it over), so it is opened without that mutex
// (SQLITE_OPEN_NOMUTEX). It runs the same pragmas as the driver's read
// connections (pragmas), so it reads the same committed WAL snapshot.

// cstmt is a prepared statement and the C buffer its arguments are bound
// from (SQLITE_STATIC: SQLite reads them in place during the step).
type cstmt struct {
	p   uintptr
	buf uintptr
	cap int
}

type rconn struct {
	tls   *libc.TLS
	db    uintptr
	stmts map[string]*cstmt
	// held: a read transaction is open, its snapshot taken when the
	// writer's generation was snap (snapshot.go). Point connections only.
	held      bool
	snap      uint64
	snapStmts snapStmts
}

// fastPool is a fixed set of read-only C connections.
type fastPool struct {
	conns  chan *rconn
	n      int
	closed bool
	// gen is the writer's generation (snapshot.go); stop ends the
	// sweeper, which closes swept when it returns.
	gen         *snapGen
	stop, swept chan struct{}
}

var errFastClosed = errors.New("sqlite: database closed")

func openFastPool(o Options, n int, gen *snapGen) (*fastPool, error) {
	p := &fastPool{conns: make(chan *rconn, n), gen: gen, stop: make(chan struct{}), swept: make(chan struct{})}
	for i := 0; i < n; i++ {
		rc, err := openRconn(o)
		if err != nil {
			close(p.swept)
			p.close()
			return nil, err
		}
		p.conns <- rc
		p.n++
	}
	go p.sweeper()
	return p, nil
}

func openRconn(o Options) (*rconn, error) {
	rc := &rconn{tls: libc.NewTLS(), stmts: map[string]*cstmt{}}
	code, err := rc.open("file:" + uriPath(o.Path))
	if err == nil && code != sqlite3.SQLITE_OK {
		err = rc.errstr(code)
	}
	if err == nil {
		sqlite3.Xsqlite3_extended_result_codes(rc.tls, rc.db, 1)
		for _, pr := range pragmas(o, true) {
			if err = rc.exec("PRAGMA " + pr); err != nil {
				break
			}
		}
	}
	if err != nil {
		rc.close()
		return nil, fmt.Errorf("sqlite: open %s: %w", o.Path, err)
	}
	return rc, nil
}

// open opens the connection; rc.db is set even when SQLite fails (it may
// return a handle holding the error), for close.
func (rc *rconn) open(uri string) (int32, error) {
	name, err := libc.CString(uri)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(rc.tls, name)
	pp := libc.Xmalloc(rc.tls, types.Size_t(unsafe.Sizeof(uintptr(0))))
	if pp == 0 {
		return 0, errors.New("sqlite: out of memory")
	}
	defer libc.Xfree(rc.tls, pp)
	*(*uintptr)(cptr(pp)) = 0
	code := sqlite3.Xsqlite3_open_v2(rc.tls, name, pp,
		sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_URI|sqlite3.SQLITE_OPEN_NOMUTEX, 0)
	rc.db = *(*uintptr)(cptr(pp))
	return code, nil
}

func (rc *rconn) errstr(code int32) error {
	msg := ""
	if rc.db != 0 {
		msg = libc.GoString(sqlite3.Xsqlite3_errmsg(rc.tls, rc.db))
	}
	if msg == "" {
		msg = libc.GoString(sqlite3.Xsqlite3_errstr(rc.tls, code))
	}
	return &cError{msg: fmt.Sprintf("%s (%d)", msg, code), code: int(code)}
}

// cError is an error SQLite returned; Code is its (extended) result code,
// as the driver's errors have one (busy in writer.go reads it).
type cError struct {
	msg  string
	code int
}

func (e *cError) Error() string { return e.msg }
func (e *cError) Code() int     { return e.code }

// exec runs one statement, ignoring any rows (a pragma's echo).
func (rc *rconn) exec(sql string) error {
	z, err := libc.CString(sql)
	if err != nil {
		return err
	}
	defer libc.Xfree(rc.tls, z)
	if code := sqlite3.Xsqlite3_exec(rc.tls, rc.db, z, 0, 0, 0); code != sqlite3.SQLITE_OK {
		return fmt.Errorf("%s: %w", sql, rc.errstr(code))
	}
	return nil
}

func (rc *rconn) prepare(query string) (*cstmt, error) {
	if s := rc.stmts[query]; s != nil {
		return s, nil
	}
	z, err := libc.CString(query)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(rc.tls, z)
	pp := libc.Xmalloc(rc.tls, types.Size_t(unsafe.Sizeof(uintptr(0))))
	if pp == 0 {
		return nil, errors.New("sqlite: out of memory")
	}
	defer libc.Xfree(rc.tls, pp)
	*(*uintptr)(cptr(pp)) = 0
	if code := sqlite3.Xsqlite3_prepare_v2(rc.tls, rc.db, z, -1, pp, 0); code != sqlite3.SQLITE_OK {
		return nil, fmt.Errorf("sqlite: prepare: %w", rc.errstr(code))
	}
	s := &cstmt{p: *(*uintptr)(cptr(pp))}
	rc.stmts[query] = s
	return s, nil
}

// bind binds args[i] to parameter i+1 from the statement's buffer: []byte
// (nil as NULL), string, int64, int, int32, bool (as 0 or 1), float64 and
// nil, as the driver binds them; another type is converted as database/sql
// converts it for the driver (driver.DefaultParameterConverter), and one
// the driver would format (time.Time), a driver.Valuer or one that does not
// convert is refused with errCUnsupported.
func (rc *rconn) bind(s *cstmt, args []any) error {
	need := 0
	converted := false
	for i, a := range args {
		switch v := a.(type) {
		case []byte:
			need += len(v)
		case string:
			need += len(v)
		case int64, int, int32, bool, float64, nil:
		default:
			c, err := convertArg(a)
			if err != nil {
				return err
			}
			if !converted {
				args, converted = append([]any(nil), args...), true
			}
			args[i] = c
			switch v := c.(type) {
			case []byte:
				need += len(v)
			case string:
				need += len(v)
			}
		}
	}
	if need > s.cap {
		// The old buffer is still bound from the last statement, but a
		// bound value is only read during a step, and every parameter is
		// bound again below before the next one.
		b := libc.Xmalloc(rc.tls, types.Size_t(max(need, 64)))
		if b == 0 {
			return errors.New("sqlite: out of memory")
		}
		if s.buf != 0 {
			libc.Xfree(rc.tls, s.buf)
		}
		s.buf, s.cap = b, max(need, 64)
	}
	if s.cap == 0 {
		// A zero-length blob or text must not be bound from a null
		// pointer (SQLite would bind NULL).
		b := libc.Xmalloc(rc.tls, 64)
		if b == 0 {
			return errors.New("sqlite: out of memory")
		}
		s.buf, s.cap = b, 64
	}
	mem := unsafe.Slice((*byte)(cptr(s.buf)), s.cap)
	off := 0
	for i, a := range args {
		var code int32
		n := int32(i + 1)
		switch v := a.(type) {
		case []byte:
			if v == nil {
				code = sqlite3.Xsqlite3_bind_null(rc.tls, s.p, n)
				break
			}
			copy(mem[off:], v)
			code = sqlite3.Xsqlite3_bind_blob(rc.tls, s.p, n, s.buf+uintptr(off), int32(len(v)), 0)
			off += len(v)
		case string:
			copy(mem[off:], v)
			code = sqlite3.Xsqlite3_bind_text(rc.tls, s.p, n, s.buf+uintptr(off), int32(len(v)), 0)
			off += len(v)
		case int64:
			code = sqlite3.Xsqlite3_bind_int64(rc.tls, s.p, n, v)
		case int:
			code = sqlite3.Xsqlite3_bind_int64(rc.tls, s.p, n, int64(v))
		case int32:
			code = sqlite3.Xsqlite3_bind_int64(rc.tls, s.p, n, int64(v))
		case bool:
			code = sqlite3.Xsqlite3_bind_int64(rc.tls, s.p, n, int64(b2i(v)))
		case float64:
			code = sqlite3.Xsqlite3_bind_double(rc.tls, s.p, n, v)
		case nil:
			code = sqlite3.Xsqlite3_bind_null(rc.tls, s.p, n)
		default:
			return fmt.Errorf("sqlite: bind: unexpected argument type %T", a)
		}
		if code != sqlite3.SQLITE_OK {
			return fmt.Errorf("sqlite: bind: %w", rc.errstr(code))
		}
	}
	return nil
}

// convertArg converts a as database/sql converts an argument for a driver
// without its own converter (modernc.org/sqlite has none); a value the
// driver would then format itself is refused with errCUnsupported.
func convertArg(a any) (any, error) {
	if _, ok := a.(driver.Valuer); ok {
		return nil, errCUnsupported // the driver's path calls it, once
	}
	c, err := driver.DefaultParameterConverter.ConvertValue(a)
	if err != nil {
		return nil, errCUnsupported // the driver's path reports it
	}
	switch c.(type) {
	case []byte, string, int64, bool, float64, nil:
		return c, nil
	}
	return nil, errCUnsupported
}

func (rc *rconn) close() {
	rc.finalize()
	if rc.db != 0 {
		sqlite3.Xsqlite3_close_v2(rc.tls, rc.db)
		rc.db = 0
	}
	rc.tls.Close()
}

// finalize finalizes the statements and frees their buffers.
func (rc *rconn) finalize() {
	for _, s := range rc.stmts {
		sqlite3.Xsqlite3_finalize(rc.tls, s.p)
		if s.buf != 0 {
			libc.Xfree(rc.tls, s.buf)
		}
	}
	rc.stmts = nil
}

// close waits for every connection to come back, then closes them; a
// read after close fails with errFastClosed.
func (p *fastPool) close() {
	if p.closed {
		return
	}
	p.closed = true
	close(p.stop)
	<-p.swept
	for ; p.n > 0; p.n-- {
		(<-p.conns).close()
	}
	close(p.conns)
}

// revision runs query (selecting revCols) with args and reads its first
// row; found is false when there is no row.
func (p *fastPool) revision(ctx context.Context, query string, args ...any) (e *storage.Entity, found bool, err error) {
	var rc *rconn
	select {
	case r, ok := <-p.conns:
		if !ok {
			return nil, false, errFastClosed
		}
		rc = r
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	defer func() {
		p.done(rc, err != nil)
		p.conns <- rc
	}()
	s, err := rc.prepare(query)
	if err != nil {
		return nil, false, err
	}
	if err := rc.bind(s, args); err != nil {
		return nil, false, err
	}
	p.ready(rc)
	// The statement runs to its first row: no cancellation is needed for
	// an indexed point read, so the request's context is not watched.
	defer sqlite3.Xsqlite3_reset(rc.tls, s.p)
	switch code := sqlite3.Xsqlite3_step(rc.tls, s.p); code {
	case sqlite3.SQLITE_ROW:
	case sqlite3.SQLITE_DONE:
		return nil, false, nil
	default:
		return nil, false, fmt.Errorf("sqlite: query: %w", rc.errstr(code))
	}
	e, err = rc.revisionRow(s.p)
	return e, err == nil, err
}

// Column types of revCols, in order.
var revTypes = [13]int32{sqlite3.SQLITE_BLOB, sqlite3.SQLITE_TEXT, sqlite3.SQLITE_INTEGER, sqlite3.SQLITE_TEXT,
	sqlite3.SQLITE_INTEGER, sqlite3.SQLITE_TEXT, sqlite3.SQLITE_INTEGER, sqlite3.SQLITE_BLOB, sqlite3.SQLITE_TEXT,
	sqlite3.SQLITE_TEXT, sqlite3.SQLITE_INTEGER, sqlite3.SQLITE_INTEGER, sqlite3.SQLITE_BLOB}

// revisionRow builds an entity from the current row of revCols, copying
// what it keeps out of SQLite's memory. The text columns are copied into
// one string.
func (rc *rconn) revisionRow(st uintptr) (*storage.Entity, error) {
	tls := rc.tls
	for i, want := range revTypes[:12] {
		if t := sqlite3.Xsqlite3_column_type(tls, st, int32(i)); t != want {
			return nil, fmt.Errorf("sqlite: reading entity: column %d has type %d, not %d", i, t, want)
		}
	}
	change := sqlite3.Xsqlite3_column_int64(tls, st, 6)
	if change < 0 || change > chDeleted {
		return nil, fmt.Errorf("sqlite: reading entity: change %d", change)
	}
	var e storage.Entity
	copy(e.ID[:], colBytes(tls, st, 0))
	copy(e.TxID[:], colBytes(tls, st, 7))
	e.Version = sqlite3.Xsqlite3_column_int64(tls, st, 2)
	e.Model.Version = int(sqlite3.Xsqlite3_column_int64(tls, st, 4))
	// tenant, model name, state, transition, user: one allocation.
	texts := [5]int32{1, 3, 5, 8, 9}
	var parts [5][]byte
	n := 0
	for i, c := range texts {
		parts[i] = colBytes(tls, st, c)
		n += len(parts[i])
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, b := range parts {
		sb.Write(b)
	}
	all := sb.String()
	var strs [5]string
	for i, b := range parts {
		strs[i], all = all[:len(b)], all[len(b):]
	}
	e.Tenant, e.Model.Name, e.State, e.Transition, e.User = strs[0], strs[1], strs[2], strs[3], strs[4]
	e.ChangeType = changeNames[change]
	e.Deleted = change == chDeleted
	if !e.Deleted {
		switch t := sqlite3.Xsqlite3_column_type(tls, st, 12); t {
		case sqlite3.SQLITE_BLOB, sqlite3.SQLITE_NULL:
			e.Data = append([]byte{}, colBytes(tls, st, 12)...)
		default:
			return nil, fmt.Errorf("sqlite: reading entity: column 12 has type %d, not %d", t, sqlite3.SQLITE_BLOB)
		}
	}
	e.CreatedAt = time.Unix(0, sqlite3.Xsqlite3_column_int64(tls, st, 10)).UTC()
	e.UpdatedAt = time.Unix(0, sqlite3.Xsqlite3_column_int64(tls, st, 11)).UTC()
	return &e, nil
}

// colBytes is column c of the current row as SQLite holds it: valid until
// the statement steps, resets or the column is converted.
func colBytes(tls *libc.TLS, st uintptr, c int32) []byte {
	p := sqlite3.Xsqlite3_column_blob(tls, st, c)
	n := sqlite3.Xsqlite3_column_bytes(tls, st, c)
	if p == 0 || n <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(cptr(p)), n)
}

// cptr is C memory's address as a pointer. The memory is libc's heap, which
// Go's collector neither moves nor frees.
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
