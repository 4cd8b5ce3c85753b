package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"svc/storage"
)

// The single writer with group commit. SQLite admits one writer at a time,
// and each COMMIT costs a WAL append (and, with synchronous=FULL, an
// fsync) whatever it holds. Every write of every store is therefore a job
// on one connection, and concurrent jobs share transactions: a job joins a
// queue; when no transaction is being written, the job's own goroutine
// becomes the leader, takes every queued job (up to groupMax) and runs
// them in one BEGIN IMMEDIATE … COMMIT, each inside its own SAVEPOINT when
// there are several, so one job's failure rolls back that job alone. Every
// job is answered only after the COMMIT holding it returned, so an
// acknowledged write is in the WAL before its request is answered.
//
// A job is a function over the open transaction (wtx). Adding a table
// written atomically with an entity change (a change-feed outbox, stored
// idempotency keys) means writing its rows from the same function: they
// commit or vanish with the rest.
//
// No goroutine is started: leaders are request goroutines. After its group
// a leader hands the role to the first job queued meanwhile and returns, so
// no request waits on others' groups longer than one group.
type writer struct {
	db   *sql.DB
	conn *sql.Conn
	// stmts caches prepared statements; only the leader touches it (the
	// hand-over through mu and the wake channel orders the accesses).
	stmts map[string]*sql.Stmt
	// c executes the statements without rows through SQLite's C interface
	// on conn's sqlite3* (cwrite.go); nil: through the driver. Leader only,
	// like stmts.
	c *rconn
	// last is the last commit instant handed out (leader only).
	last int64
	// gen is bumped around every group, for the point reads' held
	// snapshots (snapshot.go); nil bumps nothing.
	gen *snapGen
	// ck runs the checkpoints (checkpoint.go); nil without the C path,
	// when SQLite's automatic checkpoint stays on.
	ck *checkpointer

	mu     sync.Mutex
	queue  []*job
	busy   bool
	closed bool
	// idle is signalled when busy drops, for close.
	idle *sync.Cond

	// groups and jobs count written groups and the jobs in them (tests
	// and benchmarks read the mean group size).
	groups, jobs atomic.Int64
}

// groupMax bounds the jobs of one group: a group is written while the
// next one queues, and a very large group delays its first job's answer.
const groupMax = 256

type job struct {
	ctx context.Context
	fn  func(w *wtx) error
	// pure says fn only reads and writes the database (and its own result
	// variables), so it may run again after a rollback.
	pure bool
	err  error
	wake chan bool
}

// wtx is the open write transaction as one job sees it.
type wtx struct {
	w   *writer
	ctx context.Context
}

var errClosed = errors.New("sqlite: database closed")

// busy reports SQLite's SQLITE_BUSY (or an extended code of it).
func busy(err error) bool {
	var e interface{ Code() int }
	return errors.As(err, &e) && e.Code()&0xff == 5
}

func newWriter(ctx context.Context, db *sql.DB, conn *sql.Conn) *writer {
	w := &writer{db: db, conn: conn, stmts: map[string]*sql.Stmt{}, c: newCWriter(ctx, conn)}
	w.idle = sync.NewCond(&w.mu)
	return w
}

// write runs fn in a write transaction shared with concurrent writes and
// returns once that transaction committed (nil) or fn's work was rolled
// back (fn's error, or the commit's). fn runs once. A job whose ctx ends while queued is dropped with ctx's
// error; once it runs, it runs to the end of its group.
func (w *writer) write(ctx context.Context, fn func(*wtx) error) error {
	return w.submit(&job{ctx: ctx, fn: fn})
}

// writePure is write for a function that may run more than once (it only
// reads and writes the database and sets its own results): its group may
// skip per-job savepoints.
func (w *writer) writePure(ctx context.Context, fn func(*wtx) error) error {
	return w.submit(&job{ctx: ctx, fn: fn, pure: true})
}

func (w *writer) submit(j *job) error {
	if err := j.ctx.Err(); err != nil {
		return err
	}
	j.wake = make(chan bool, 1)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	if !w.busy {
		w.busy = true
		w.mu.Unlock()
		w.lead(j)
		return j.err
	}
	w.queue = append(w.queue, j)
	w.mu.Unlock()
	if <-j.wake {
		w.lead(j)
	}
	return j.err
}

// lead writes own with the jobs queued before it, answers them, then hands
// the writer to the next queued job or frees it.
func (w *writer) lead(own *job) {
	// Let the goroutines that are runnable now (requests on their way to
	// write) reach the queue first: they join this group instead of each
	// paying a commit of its own.
	runtime.Gosched()
	w.mu.Lock()
	n := min(len(w.queue), groupMax-1)
	group := make([]*job, 0, n+1)
	group = append(group, own)
	group = append(group, w.queue[:n]...)
	rest := copy(w.queue, w.queue[n:])
	clear(w.queue[rest:])
	w.queue = w.queue[:rest]
	w.mu.Unlock()

	defer func() {
		if p := recover(); p != nil {
			// A panicking job must not leave the transaction open nor the
			// others waiting: roll back, fail the group, re-panic.
			w.conn.ExecContext(context.Background(), "ROLLBACK")
			w.gen.written()
			for _, j := range group[1:] {
				j.err = fmt.Errorf("sqlite: write group aborted: %v", p)
				j.wake <- false
			}
			w.release()
			panic(p)
		}
	}()
	w.gen.writing()
	w.run(group)
	w.gen.written()
	w.groups.Add(1)
	w.jobs.Add(int64(len(group)))
	for _, j := range group[1:] {
		j.wake <- false
	}
	if w.ck != nil && w.ck.frames.Load() >= w.ck.hard {
		// The checkpointer has not caught up with the writes: bound the
		// WAL here, between groups (checkpoint.go).
		w.ck.mu.Lock()
		w.ctl("PRAGMA wal_checkpoint(PASSIVE)")
		w.ck.mu.Unlock()
		w.ck.inline.Add(1)
		w.ck.frames.Store(0)
	}
	w.release()
}

func (w *writer) release() {
	w.mu.Lock()
	var next *job
	if len(w.queue) > 0 && !w.closed {
		next = w.queue[0]
		rest := copy(w.queue, w.queue[1:])
		w.queue[rest] = nil
		w.queue = w.queue[:rest]
	} else {
		for _, j := range w.queue {
			j.err = errClosed
			j.wake <- false
		}
		w.queue = nil
		w.busy = false
		w.idle.Broadcast()
	}
	w.mu.Unlock()
	if next != nil {
		next.wake <- true
	}
}

// run writes one group in one transaction, setting every job's err.
func (w *writer) run(group []*job) {
	live := group[:0:0]
	for _, j := range group {
		if err := j.ctx.Err(); err != nil {
			j.err = err
			continue
		}
		live = append(live, j)
	}
	if len(live) == 0 {
		return
	}
	if !w.begin(live) {
		return
	}
	switch {
	case len(live) == 1:
		j := live[0]
		if j.err = j.fn(&wtx{w, j.ctx}); j.err != nil {
			w.rollback()
			return
		}
	case allPure(live):
		// Optimistic: no savepoints. A failure (rare: a conflict, a taken
		// id) rolls the group back; the failed job keeps its error and the
		// others, whose functions only write what the database holds,
		// run again with savepoints.
		for i, j := range live {
			if j.err = j.fn(&wtx{w, j.ctx}); j.err != nil {
				w.rollback()
				rest := append(append(make([]*job, 0, len(live)-1), live[:i]...), live[i+1:]...)
				for _, r := range rest {
					r.err = nil
				}
				if len(rest) == 0 || !w.begin(rest) || !w.eachInSavepoint(rest) {
					return
				}
				w.commit(rest)
				return
			}
		}
	default:
		if !w.eachInSavepoint(live) {
			return
		}
	}
	w.commit(live)
}

// fail sets err on every job of group that has none.
func fail(group []*job, err error) {
	for _, j := range group {
		if j.err == nil {
			j.err = err
		}
	}
}

func allPure(group []*job) bool {
	for _, j := range group {
		if !j.pure {
			return false
		}
	}
	return true
}

// begin opens the group's transaction; false (errors set) when it cannot.
func (w *writer) begin(group []*job) bool {
	if _, err := w.ctl("BEGIN IMMEDIATE"); err != nil {
		if busy(err) {
			// Another process held the write lock past the busy timeout.
			fail(group, fmt.Errorf("sqlite: the database file stayed locked by another process for SVC_SQLITE_BUSY_TIMEOUT: %w", storage.ErrUnavailable))
			return false
		}
		fail(group, fmt.Errorf("sqlite: begin: %w", err))
		return false
	}
	return true
}

// eachInSavepoint runs every job inside its own savepoint, so a failing
// job rolls back alone; false (transaction rolled back, errors set) when
// the transaction itself failed.
func (w *writer) eachInSavepoint(group []*job) bool {
	for _, j := range group {
		if _, err := w.ctl("SAVEPOINT job"); err != nil {
			w.rollback()
			fail(group, fmt.Errorf("sqlite: savepoint: %w", err))
			return false
		}
		j.err = j.fn(&wtx{w, j.ctx})
		if j.err != nil {
			if _, err := w.ctl("ROLLBACK TO job"); err != nil {
				// SQLite rolled the whole transaction back (a full
				// disk, an I/O error): nothing of the group is left.
				w.rollback()
				fail(group, fmt.Errorf("sqlite: rolling back a failed write: %w", err))
				return false
			}
		}
		if _, err := w.ctl("RELEASE job"); err != nil {
			w.rollback()
			fail(group, fmt.Errorf("sqlite: release: %w", err))
			return false
		}
	}
	return true
}

func (w *writer) commit(group []*job) {
	if _, err := w.ctl("COMMIT"); err != nil {
		w.rollback()
		fail(group, fmt.Errorf("sqlite: commit: %w", err))
	}
}

// ctl runs a transaction-control statement, prepared once: parsing
// SAVEPOINT and RELEASE again for every job of every group showed in
// profiles.
func (w *writer) ctl(query string) (sql.Result, error) {
	return (&wtx{w: w}).exec(query)
}

func (w *writer) rollback() {
	w.ctl("ROLLBACK")
}

// close waits for the group being written, refuses later writes and
// closes the connection.
func (w *writer) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	for w.busy {
		w.idle.Wait()
	}
	w.mu.Unlock()
	if w.ck != nil {
		sqlite3.Xsqlite3_wal_hook(w.c.tls, w.c.db, 0, 0)
		walHooks.Delete(w.c.db)
		w.ck.close()
	}
	for _, s := range w.stmts {
		s.Close()
	}
	if w.c != nil {
		w.c.release()
	}
	w.conn.Close()
	w.db.Close()
}

// stmt is a prepared statement of the writer connection.
func (t *wtx) stmt(query string) (*sql.Stmt, error) {
	if s, ok := t.w.stmts[query]; ok {
		return s, nil
	}
	s, err := t.w.conn.PrepareContext(context.Background(), query)
	if err != nil {
		return nil, fmt.Errorf("sqlite: prepare: %w", err)
	}
	t.w.stmts[query] = s
	return s, nil
}

// exec runs a statement in the transaction. The job's context is not
// passed down: a statement of a running group is not its caller's to
// cancel.
func (t *wtx) exec(query string, args ...any) (sql.Result, error) {
	if t.w.c != nil {
		r, err := t.w.c.run(query, args)
		if !errors.Is(err, errCUnsupported) {
			return r, err
		}
	}
	s, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.Exec(args...)
}

func (t *wtx) query(query string, args ...any) (*sql.Rows, error) {
	s, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.Query(args...)
}

func (t *wtx) queryRow(query string, args ...any) row {
	s, err := t.stmt(query)
	if err != nil {
		return row{err: err}
	}
	return row{r: s.QueryRow(args...)}
}

// row is a one-row result, or the error that kept the statement from
// running.
type row struct {
	r   *sql.Row
	err error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.r.Scan(dest...)
}

// now is a commit instant: the wall clock, forced past the last one handed
// out, so this process's commits are strictly ordered in time.
func (t *wtx) now() int64 {
	n := time.Now().UnixNano()
	if n <= t.w.last {
		n = t.w.last + 1
	}
	t.w.last = n
	return n
}

// after records that instant n was handed out (a commit pushed past an
// entity's last revision).
func (t *wtx) after(n int64) {
	if n > t.w.last {
		t.w.last = n
	}
}
