// Package sqlite is the SQLite storage engine: every store of storage/ in
// one file on one machine, through the pure-Go driver modernc.org/sqlite
// (svc stays a static binary). One process owns the file (a lock file
// beside it); writes go through one connection with group commit
// (writer.go), reads through a pool of read-only connections, which WAL
// mode lets run alongside the writer. docs/decisions/0031-sqlite-engine.md
// records the choices and their measurements.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"svc/storage"
)

// Options are the engine's settings, taken from config.
type Options struct {
	// Path is the database file (SVC_SQLITE_PATH); its directory is created
	// (0700) when missing.
	Path string
	// AutoMigrate applies pending migrations at open; without it a file
	// missing migrations is refused (SVC_SQLITE_AUTO_MIGRATE).
	AutoMigrate bool
	// BusyTimeout is how long a statement waits for a lock another process
	// holds, e.g. an operator's sqlite3 shell (SVC_SQLITE_BUSY_TIMEOUT).
	BusyTimeout time.Duration
	// CacheSizeKiB is each connection's page cache (SVC_SQLITE_CACHE_SIZE).
	CacheSizeKiB int
	// SearchScanLimit bounds the rows one search examines; past it the
	// search fails with storage.ErrScanBudget. 0 is unbounded
	// (SVC_SQLITE_SEARCH_SCAN_LIMIT).
	SearchScanLimit int
	// Readers is the size of the read pool; 0 picks one from GOMAXPROCS.
	Readers int
	// Synchronous is SQLite's synchronous mode for the writer: "NORMAL"
	// (the default; see the decision record) or "FULL".
	Synchronous string
}

// DB is an open SQLite engine.
type DB struct {
	opt  Options
	lock *fileLock
	// r is the read pool: read-only connections, each statement its own
	// snapshot of the last commit.
	r *sql.DB
	// rstmts caches prepared read statements (database/sql prepares each
	// on a connection once and reuses it).
	rstmts sync.Map // string → *sql.Stmt
	// fast serves point reads without database/sql (fastread.go).
	fast *fastPool
	w    *writer
}

// ErrLocked: another process holds the database file.
var ErrLocked = errors.New("sqlite: database locked")

// Open locks the file, opens the writer and the read pool, and applies
// migrations when AutoMigrate is set (otherwise a file missing migrations
// is refused, as is a file written by a newer svc).
func Open(ctx context.Context, o Options) (*DB, error) {
	if o.Path == "" {
		return nil, errors.New("sqlite: SVC_SQLITE_PATH is empty")
	}
	if o.Readers <= 0 {
		o.Readers = max(4, 2*runtime.GOMAXPROCS(0))
	}
	if o.Synchronous == "" {
		o.Synchronous = "NORMAL"
	}
	if dir := filepath.Dir(o.Path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sqlite: creating the data directory: %w", err)
		}
	}
	lk, err := lockFile(o.Path + ".lock")
	if err != nil {
		return nil, err
	}
	db := &DB{opt: o, lock: lk}
	fail := func(err error) (*DB, error) {
		db.Close()
		return nil, err
	}
	wdb, conn, err := openWriteConn(ctx, o)
	if err != nil {
		return fail(err)
	}
	db.w = newWriter(ctx, wdb, conn)
	db.w.gen = newSnapGen()
	if c := db.w.c; c != nil {
		// Checkpoints off the writer's path (checkpoint.go); the hook
		// replaces SQLite's automatic checkpoint on this connection.
		if db.w.ck, err = newCheckpointer(ctx, o); err != nil {
			return fail(err)
		}
		walHooks.Store(c.db, db.w.ck)
		sqlite3.Xsqlite3_wal_hook(c.tls, c.db, cFunc(walHook), c.db)
	}
	if err := db.migrate(ctx); err != nil {
		return fail(err)
	}
	db.r, err = sql.Open("sqlite", dsn(o, true))
	if err != nil {
		return fail(fmt.Errorf("sqlite: open: %w", err))
	}
	db.r.SetMaxOpenConns(o.Readers)
	db.r.SetMaxIdleConns(o.Readers)
	db.r.SetConnMaxIdleTime(0)
	db.r.SetConnMaxLifetime(0)
	if err := db.r.PingContext(ctx); err != nil {
		return fail(fmt.Errorf("sqlite: open %s: %w", o.Path, err))
	}
	if db.fast, err = openFastPool(o, o.Readers, db.w.gen); err != nil {
		return fail(err)
	}
	return db, nil
}

// dsn is the driver's connection string: the file as a URI (so a path with
// '?' or '#' stays a path) and the pragmas every connection runs.
// openWriteConn opens a database/sql handle of one connection that never
// closes, with the writer's pragmas, and takes that connection: the
// writer's and the checkpointer's.
func openWriteConn(ctx context.Context, o Options) (*sql.DB, *sql.Conn, error) {
	db, err := sql.Open("sqlite", dsn(o, false))
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: open: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("sqlite: open %s: %w", o.Path, err)
	}
	return db, conn, nil
}

func dsn(o Options, readOnly bool) string {
	q := pragmas(o, readOnly)
	for i, p := range q {
		q[i] = "_pragma=" + p
	}
	return "file:" + uriPath(o.Path) + "?" + strings.Join(q, "&")
}

// uriPath is path escaped for a file: URI.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// pragmas are the settings every connection runs when it opens: the
// driver's (dsn) and the point reads' (fastread.go).
func pragmas(o Options, readOnly bool) []string {
	q := []string{
		"busy_timeout(" + strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10) + ")",
		"cache_size(-" + strconv.Itoa(max(o.CacheSizeKiB, 1)) + ")",
		"foreign_keys(0)",
		"temp_store(memory)",
		// Reads map the file instead of copying pages through read(2).
		"mmap_size(268435456)",
	}
	if readOnly {
		q = append(q, "query_only(1)")
	} else {
		q = append(q, "journal_mode(WAL)", "synchronous("+o.Synchronous+")",
			// A checkpoint truncates the WAL back to this size.
			"journal_size_limit(67108864)")
	}
	return q
}

// Close stops the writer, closes every connection and releases the lock.
// It is safe on a partly opened DB and idempotent.
func (db *DB) Close() {
	if db.w != nil {
		db.w.close()
	}
	if db.r != nil {
		db.r.Close()
	}
	if db.fast != nil {
		db.fast.close() // idempotent; a read after it fails
	}
	if db.lock != nil {
		db.lock.release()
		db.lock = nil
	}
}

// WriteStats counts the write groups committed and the jobs in them since
// open (jobs/groups is the mean group size), for metrics and benchmarks.
func (db *DB) WriteStats() (groups, jobs int64) { return db.w.groups.Load(), db.w.jobs.Load() }

// Path is the database file.
func (db *DB) Path() string { return db.opt.Path }

// Ping reports whether the file answers a read, for readiness.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// PoolStats reports the read pool for /metrics (the writer is one more
// connection, always open).
func (db *DB) PoolStats() storage.PoolStats {
	st := db.r.Stats()
	return storage.PoolStats{Max: int32(st.MaxOpenConnections), Total: int32(st.OpenConnections),
		Idle: int32(st.Idle), InUse: int32(st.InUse), IdleClosed: st.MaxIdleTimeClosed}
}

// rstmt is a prepared statement of the read pool.
func (db *DB) rstmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := db.rstmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := db.r.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sqlite: prepare: %w", err)
	}
	if prev, loaded := db.rstmts.LoadOrStore(query, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	return s, nil
}

// query runs a read statement of the pool.
func (db *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := db.rstmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query: %w", err)
	}
	return rows, nil
}

// queryRow runs a one-row read statement of the pool.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) row {
	s, err := db.rstmt(ctx, query)
	if err != nil {
		return row{err: err}
	}
	return row{r: s.QueryRowContext(ctx, args...)}
}

// ns is t as stored: Unix nanoseconds, 0 for the zero time.
func ns(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNS is the time stored as n (UTC), the zero time for 0.
func fromNS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// id16 reads a 16-byte id column.
func id16(b []byte) (id [16]byte) {
	copy(id[:], b)
	return id
}
