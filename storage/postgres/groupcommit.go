package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"svc/storage"
)

// Group commit of single creates (issue 14). A create of one entity is one
// statement; committed on its own, each pays a transaction: a commit
// record, a WAL flush (an fsync) and a round trip, which is most of what
// PostgreSQL spends on it. Concurrent single creates therefore share
// transactions: each joins a queue, and one of the waiting requests — the
// leader — takes every queued create (up to groupMaxBatch) and writes them
// in one transaction: as one statement over arrays (groupmulti.go), or, if
// PostgreSQL rejects that, as their own statements pipelined between BEGIN
// and COMMIT. Every request is answered only after the transaction holding
// its create committed, so an acknowledged create is as durable as before.
//
// A create that fails inside a batch (a duplicate id, say) must not fail
// the others: the one-statement attempt wrote nothing; in the pipelined
// transaction the failing statement is known, so the batch is rolled
// back, that create answered with its error, and the rest sent again
// without it. An error that names no
// statement (the connection broke, the commit failed) fails the whole
// batch, as it would have failed each create alone.
//
// No goroutine is started: leaders are request goroutines. When a leader
// has answered its batch and creates are still queued, it wakes the first
// of them to lead the next batch and returns. At most groupFlushers
// batches are in flight, so one batch fills while another waits on its
// WAL flush; with a free slot a create is sent at once, so a lone create
// waits for nobody. Four slots: at 16 concurrent creates on this 2-core
// box, 2 gave the fewest PostgreSQL CPU per create but left the cores idle
// while batches waited on fsync; 8 and 16 cost 20–35 % more CPU per create
// for smaller batches (docs/benchmarks-history.md, "Single create: group
// commit").
type groupCommit struct {
	db       *DB
	mu       sync.Mutex
	queue    []*groupEntry
	flushers int
	// batches and entries count committed-or-failed batches and the
	// creates in them (tests and profiles read the mean batch size); many
	// counts the batches written as one statement.
	batches, entries, many atomic.Int64
}

const (
	groupFlushers = 4
	groupMaxBatch = 256
)

type groupEntry struct {
	// tx and now are the create (for the one-statement batch); sql and
	// args its own statement.
	tx   *storage.Tx
	now  int64
	sql  string
	args []any
	err  error
	// wake says the entry's fate: false, answered (err is set); true,
	// lead the next batch.
	wake chan bool
}

// commit writes one single-create statement through a shared transaction
// and returns once that transaction committed (or failed).
func (g *groupCommit) commit(ctx context.Context, tx *storage.Tx, now int64, sql string, args []any) error {
	e := &groupEntry{tx: tx, now: now, sql: sql, args: args, wake: make(chan bool, 1)}
	// A batch is written under the leader's context without its
	// cancellation: the other creates in it are not the leader's to
	// cancel. Statements are bounded by the statement timeout.
	wctx := context.WithoutCancel(ctx)
	g.mu.Lock()
	if g.flushers < groupFlushers {
		g.flushers++
		g.mu.Unlock()
		g.lead(wctx, e)
		return e.err
	}
	g.queue = append(g.queue, e)
	g.mu.Unlock()
	// The wait ignores ctx: a queued create may already be in a batch
	// being written, and its request must learn the outcome.
	if <-e.wake {
		g.lead(wctx, e)
	}
	return e.err
}

// lead holds a flusher slot: it writes own with the creates queued before
// it (up to groupMaxBatch), answers them, then passes the slot to the next
// queued create or gives it back.
func (g *groupCommit) lead(ctx context.Context, own *groupEntry) {
	g.mu.Lock()
	n := min(len(g.queue), groupMaxBatch-1)
	batch := make([]*groupEntry, 0, n+1)
	batch = append(batch, own)
	batch = append(batch, g.queue[:n]...)
	rest := copy(g.queue, g.queue[n:])
	clear(g.queue[rest:])
	g.queue = g.queue[:rest]
	g.mu.Unlock()

	defer func() {
		// Nothing in write should panic; if something does, the waiters
		// must not wait forever nor the slot leak: they get an error and
		// the panic goes on up the leader's request.
		if p := recover(); p != nil {
			for _, e := range batch[1:] {
				e.err = fmt.Errorf("postgres: create batch aborted: %v", p)
				e.wake <- false
			}
			g.release()
			panic(p)
		}
	}()
	g.write(ctx, batch)
	g.batches.Add(1)
	g.entries.Add(int64(len(batch)))
	for _, e := range batch[1:] {
		e.wake <- false
	}
	g.release()
}

// release passes the leader's slot to the first queued create, or gives
// it back.
func (g *groupCommit) release() {
	g.mu.Lock()
	var next *groupEntry
	if len(g.queue) > 0 {
		next = g.queue[0]
		rest := copy(g.queue, g.queue[1:])
		g.queue[rest] = nil
		g.queue = g.queue[:rest]
	} else {
		g.flushers--
	}
	g.mu.Unlock()
	if next != nil {
		next.wake <- true // the slot passes on; next leads its own batch
	}
}

// write commits batch in one transaction, setting each entry's err.
// A statement's own error drops that entry and the rest is written again.
//
// A batch goes first as one statement (insertMany); when that fails in
// PostgreSQL, nothing was written and it goes statement by statement.
func (g *groupCommit) write(ctx context.Context, batch []*groupEntry) {
	if len(batch) > 1 {
		if handled, err := g.tryMany(ctx, batch); handled {
			for _, e := range batch {
				e.err = err
			}
			return
		}
	}
	for len(batch) > 0 {
		failed, err := g.try(ctx, batch)
		if failed < 0 {
			for _, e := range batch {
				e.err = err
			}
			return
		}
		batch[failed].err = err
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

// try sends batch as one transaction. It returns -1 and the outcome for
// all (nil when committed), or the index of the one entry whose statement
// failed and that statement's error (nothing committed).
func (g *groupCommit) try(ctx context.Context, batch []*groupEntry) (int, error) {
	c, err := g.db.acquire(ctx)
	if err != nil {
		return -1, err
	}
	defer c.Release()
	if len(batch) == 1 {
		// One statement is atomic on its own: no BEGIN/COMMIT.
		if _, err := c.Exec(ctx, batch[0].sql, batch[0].args...); err != nil {
			return -1, fmt.Errorf("postgres: inserting entity: %w", err)
		}
		return -1, nil
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	for _, e := range batch {
		b.Queue(e.sql, e.args...)
	}
	b.Queue("COMMIT")
	res := c.SendBatch(ctx, b)
	failed := -1
	if _, err = res.Exec(); err == nil {
		for i := range batch {
			if _, err = res.Exec(); err != nil {
				failed = i
				break
			}
		}
		if err == nil {
			var tag pgconn.CommandTag
			if tag, err = res.Exec(); err == nil && tag.String() != "COMMIT" {
				err = fmt.Errorf("commit answered %q", tag.String())
			}
		}
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		return -1, nil
	}
	// After a failed statement the server skipped the rest and left the
	// transaction block aborted: end it, so the connection goes back to
	// the pool idle (a connection that cannot is discarded on release).
	if c.Conn().PgConn().TxStatus() != 'I' {
		c.Exec(ctx, "ROLLBACK")
	}
	var pe *pgconn.PgError
	if failed >= 0 && errors.As(err, &pe) {
		return failed, fmt.Errorf("postgres: inserting entity: %w", err)
	}
	// Not one statement's fault (the connection, BEGIN, COMMIT): the
	// outcome of the batch is that error for everyone.
	return -1, fmt.Errorf("postgres: committing a create batch: %w", err)
}
