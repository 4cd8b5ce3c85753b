package postgres

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The entity document GIN index keeps new entries in a pending list
// (fastupdate) and merges them into the index in bulk, which is much
// cheaper per entry than inserting each one — but the merge falls on
// whichever insert finds the list over gin_pending_list_limit, and that
// request waits for all of it (the create latency tail of issue 14:
// 0.3–2.5 s at the default 4 MB). Autovacuum merges it too, but only when
// it happens to run.
//
// ginCleaner merges the list off the request path: every commit that
// wrote documents pokes it, and it runs gin_clean_pending_list shortly
// after (cleanDelay gathers the writes of that interval into one merge),
// so the list stays far below its limit and inserts only append to it.
// Cleanups of several nodes serialise on the index's cleanup lock;
// inserts never wait for a cleanup (they skip their own when one runs).
type ginCleaner struct {
	db     *DB
	poke   chan struct{}
	ctx    context.Context // cancelled by close
	cancel context.CancelFunc
	done   sync.WaitGroup
	runs   atomic.Int64
	off    atomic.Bool // the role may not clean (not the index owner)
	delay  time.Duration
}

// cleanDelay is how long after a write the pending list is merged: long
// enough to merge many writes at once, short enough that at bulk-ingest
// rates the list stays well under gin_pending_list_limit (migration 0019).
const cleanDelay = 100 * time.Millisecond

func (g *ginCleaner) start(db *DB) {
	g.db, g.delay = db, cleanDelay
	g.poke = make(chan struct{}, 1)
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.done.Add(1)
	go g.loop()
}

// close stops the cleaner and waits for a cleanup in progress.
func (g *ginCleaner) close() {
	if g.cancel == nil {
		return
	}
	g.cancel()
	g.done.Wait()
}

// wrote tells the cleaner that documents were committed.
func (g *ginCleaner) wrote() {
	if g.poke == nil || g.off.Load() {
		return
	}
	select {
	case g.poke <- struct{}{}:
	default:
	}
}

func (g *ginCleaner) loop() {
	defer g.done.Done()
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-g.poke:
		}
		t.Reset(g.delay)
		select {
		case <-g.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		g.clean()
	}
}

func (g *ginCleaner) clean() {
	ctx := g.ctx
	c, err := g.db.acquire(ctx)
	if err != nil {
		return // the pool is busy or closing: the next write pokes again
	}
	defer c.Release()
	if _, err := c.Exec(ctx, `SELECT gin_clean_pending_list('entities_doc'::regclass)`); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
			// Only the index owner may clean; inserts then merge the
			// (small, migration 0019) list themselves, as before.
			g.off.Store(true)
			slog.Warn("postgres: cannot merge the entity document index's pending list (not its owner); inserts will", "error", err)
		}
		return
	}
	g.runs.Add(1)
}
