package postgres

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Schema roles get statement_timeout as a role default, but PostgreSQL
// lets any session change its own settings: a psql session with the
// issued credentials can SET statement_timeout = 0 (or
// idle_in_transaction_session_timeout = 0) and hold a backend, its
// snapshot and its locks on svc's tables for as long as it likes.
//
// sqlWatchdog enforces the limit from outside the session. Every period it
// looks up the sessions of the roles in sql_schemas (pg_stat_activity)
// and
//   - cancels a statement running longer than limit + period (the role's
//     own timeout, when left alone, fires first);
//   - ends a session whose statement ignored that cancel for another
//     limit, one idle inside a transaction longer than limit + period,
//     and one connected to any database of the cluster but the schema's
//     own (sqlschema_tenantdb.go; svc's database for a schema built
//     before migration 0038): the revocations of migrations 0034 and
//     0035 hold only there.
//
// Seeing other roles' session state and signalling them needs superuser,
// or pg_read_all_stats and pg_signal_backend
// (docs/decisions/0033-sql-tenant-isolation.md); without them the
// watchdog logs once and keeps trying.
type sqlWatchdog struct {
	db     *DB
	limit  time.Duration
	period time.Duration
	ctx    context.Context // cancelled by close
	cancel context.CancelFunc
	done   sync.WaitGroup
	warned atomic.Bool
	// acted counts the sessions signalled, for tests.
	acted atomic.Int64
}

// watchPeriod is how often the watchdog looks: a tenth of the limit,
// within [100 ms, 5 s].
func watchPeriod(limit time.Duration) time.Duration {
	return min(max(limit/10, 100*time.Millisecond), 5*time.Second)
}

func (w *sqlWatchdog) start(db *DB, limit time.Duration) {
	w.db, w.limit, w.period = db, limit, watchPeriod(limit)
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.done.Add(1)
	go w.loop()
}

// close stops the watchdog and waits for a sweep in progress.
func (w *sqlWatchdog) close() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.done.Wait()
}

func (w *sqlWatchdog) loop() {
	defer w.done.Done()
	t := time.NewTicker(w.period)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
			if err := w.sweep(); err != nil && w.ctx.Err() == nil && !w.warned.Swap(true) {
				slog.Warn("SQL schema session watchdog", "err", err)
			}
		}
	}
}

// sweep signals every session past its bounds once.
func (w *sqlWatchdog) sweep() error {
	ctx, cancel := context.WithTimeout(w.ctx, max(w.period, 5*time.Second))
	defer cancel()
	c, err := w.db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	grace := (w.limit + w.period).Milliseconds()
	rows, err := c.Query(ctx, `SELECT a.pid,
		       coalesce(a.datname IS DISTINCT FROM s.db
		                OR a.state LIKE 'idle in transaction%'
		                OR a.query_start < now() - ($1::bigint + $2::bigint) * interval '1 millisecond', false) AS terminate
		  FROM pg_stat_activity a
		  JOIN (SELECT pg_role, coalesce(pg_database, current_database()) AS db FROM sql_schemas) s ON s.pg_role = a.usename::text
		 WHERE a.pid <> pg_backend_pid()
		   AND (a.datname IS DISTINCT FROM s.db
		        OR (a.state = 'active' AND a.query_start < now() - $1::bigint * interval '1 millisecond')
		        OR (a.state LIKE 'idle in transaction%' AND a.state_change < now() - $1::bigint * interval '1 millisecond'))`,
		grace, w.limit.Milliseconds())
	if err != nil {
		return err
	}
	type target struct {
		pid       int32
		terminate bool
	}
	var ts []target
	for rows.Next() {
		var t target
		if err := rows.Scan(&t.pid, &t.terminate); err != nil {
			rows.Close()
			return err
		}
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var firstErr error
	for _, t := range ts {
		q := "SELECT pg_cancel_backend($1)"
		if t.terminate {
			q = "SELECT pg_terminate_backend($1)"
		}
		var ok bool
		if err := c.QueryRow(ctx, q, t.pid).Scan(&ok); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		w.acted.Add(1)
	}
	return firstErr
}
