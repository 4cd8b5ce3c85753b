// Package postgres is the PostgreSQL storage engine on pgx/v5.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"svc/storage"
)

// Options are the engine's settings, taken from config.
type Options struct {
	URL                string
	MaxConns, MinConns int
	MaxConnIdleTime    time.Duration
	// AcquireTimeout bounds the wait for a pooled connection; past it the
	// call fails with storage.ErrUnavailable (503). 0 waits as long as the
	// caller's context allows.
	AcquireTimeout   time.Duration
	StatementTimeout time.Duration
	IdleInTxTimeout  time.Duration
	AutoMigrate      bool
	MigrateLockWait  time.Duration
	// SQLMaxConns and SQLMaxConnsPerTenant bound the connections made as
	// SQL schema roles for POST /sql/query, in total and per tenant
	// (sqlschema_pool.go); 0 means the default.
	SQLMaxConns, SQLMaxConnsPerTenant int
}

// DB is an open engine.
type DB struct {
	pool *pgxpool.Pool
	opt  Options
	// sqlRoles pools connections made as SQL schema roles (POST /sql/query).
	sqlRoles rolePoolSet
	// minConns is the pool's minimum, for PoolStats.
	minConns int32
	// creates merges concurrent single creates into shared transactions.
	creates groupCommit
	// gin merges the document index's pending list off the request path.
	gin ginCleaner
	// sqlWatch cancels and ends SQL schema role sessions past their limit
	// (started by the first SQLSchemas call, stopped by Close).
	sqlWatch     sqlWatchdog
	sqlWatchOnce sync.Once
}

// Open connects, pings and, when AutoMigrate is set, applies migrations.
func Open(ctx context.Context, o Options) (*DB, error) {
	pc, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		// The URL may hold a password: report the shape, not the value.
		return nil, errors.New("postgres: SVC_POSTGRES_URL does not parse as a connection URL")
	}
	if o.MaxConns > 0 {
		pc.MaxConns = int32(o.MaxConns)
	}
	if o.MinConns >= 0 {
		pc.MinConns = int32(o.MinConns)
	}
	if o.MaxConnIdleTime > 0 {
		pc.MaxConnIdleTime = o.MaxConnIdleTime
		// pgxpool closes idle connections only in its health check (every
		// minute by default), so a short idle time would be overshot by up
		// to a minute: check at least twice per idle time.
		pc.HealthCheckPeriod = min(pc.HealthCheckPeriod, max(o.MaxConnIdleTime/2, 50*time.Millisecond))
	}
	rp := pc.ConnConfig.RuntimeParams
	rp["statement_timeout"] = strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
	rp["idle_in_transaction_session_timeout"] = strconv.FormatInt(o.IdleInTxTimeout.Milliseconds(), 10)
	rp["application_name"] = "svc"
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: creating pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: ping: %w", err)
	}
	db := &DB{pool: pool, opt: o, minConns: pc.MinConns}
	db.creates.db = db
	if o.AutoMigrate {
		if _, err := db.Migrate(ctx); err != nil {
			pool.Close()
			return nil, err
		}
	}
	db.gin.start(db)
	return db, nil
}

// Close releases the pool.
func (db *DB) Close() {
	db.sqlWatch.close()
	db.gin.close()
	db.sqlRoles.closeAll()
	db.pool.Close()
}

// PoolStats is a snapshot of the connection pool.
func (db *DB) PoolStats() storage.PoolStats {
	st := db.pool.Stat()
	return storage.PoolStats{Max: st.MaxConns(), Min: db.minConns, Total: st.TotalConns(),
		Idle: st.IdleConns(), InUse: st.AcquiredConns(), IdleClosed: st.MaxIdleDestroyCount()}
}

// Ping reports whether the database answers, for readiness.
func (db *DB) Ping(ctx context.Context) error { return db.pool.Ping(ctx) }

// acquire takes a pooled connection within AcquireTimeout.
func (db *DB) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	actx := ctx
	if db.opt.AcquireTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, db.opt.AcquireTimeout)
		defer cancel()
	}
	c, err := db.pool.Acquire(actx)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return nil, fmt.Errorf("no pooled connection within %s: %w", db.opt.AcquireTimeout, storage.ErrUnavailable)
		}
		return nil, fmt.Errorf("postgres: acquire: %w", err)
	}
	return c, nil
}
