package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Checkpoints off the writer's critical path. SQLite's automatic checkpoint
// runs inside the COMMIT that takes the WAL past wal_autocheckpoint pages,
// on the committing connection: the writer copied the WAL's frames into
// the file and fsynced both (synchronous=NORMAL syncs at checkpoints)
// while every queued job waited, 7 % of a served single create's CPU and
// 18 % of the writer's for a collection, plus the fsyncs' wall time.
//
// Instead the writer connection carries a WAL hook (which replaces the
// automatic checkpoint): after each commit it records the WAL's frame
// count and, past ckptSoft, wakes the checkpointer, a goroutine of the DB
// with its own connection that runs PASSIVE checkpoints (they never block
// the writer nor readers). Its copying and fsyncs run on the other core
// while the writer keeps committing.
//
// The WAL restarts from its beginning (and journal_size_limit truncates
// it) only at a write transaction that begins when every frame has been
// copied back. Under sustained writes a checkpoint running beside the
// writer rarely ends with nothing left, so the writer keeps the bound
// itself: past ckptHard frames it waits for the checkpoint running beside
// it, if any, and runs a PASSIVE checkpoint on its own connection between
// groups (no group is open then, so it copies the rest, which the
// checkpointer's rounds keep small, and the next group restarts the WAL
// unless a reader still holds an old snapshot).
const (
	ckptSoft = 1000 // SQLite's default wal_autocheckpoint
	ckptHard = 4 * ckptSoft
)

// walHooks maps a writer connection's sqlite3* to its checkpointer, for
// walHook (a C callback gets no Go closure).
var walHooks sync.Map // uintptr → *checkpointer

// walHook is the writer connection's sqlite3_wal_hook: called by SQLite
// after each commit, on the writer's goroutine, with the WAL's frame count.
func walHook(_ *libc.TLS, _, db, _ uintptr, frames int32) int32 {
	if c, ok := walHooks.Load(db); ok {
		c.(*checkpointer).committed(int64(frames))
	}
	return sqlite3.SQLITE_OK
}

// cFunc is a top-level function as a C function pointer (the driver's
// cFuncPointer): the address of its func value, which lives in read-only
// data and does not move.
func cFunc[T any](f T) uintptr { return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f})) }

type checkpointer struct {
	db   *sql.DB
	conn *sql.Conn
	// soft and hard are ckptSoft and ckptHard (a test lowers them).
	soft, hard int64
	// frames is the WAL's frame count after the writer's last commit.
	frames atomic.Int64
	// mark is frames at the last wake-up (writer only).
	mark int64
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	// mu is held through every checkpoint, the checkpointer's and the
	// writer's: a PASSIVE checkpoint finding another one running returns
	// at once with nothing done, and the writer's must not.
	mu sync.Mutex
	// runs counts the checkpointer's checkpoints, inline the writer's own.
	runs, inline atomic.Int64
}

// newCheckpointer opens the checkpoint connection (the writer's pragmas:
// its synchronous mode is the one the checkpoint's fsyncs follow) and
// starts its goroutine.
func newCheckpointer(ctx context.Context, o Options) (*checkpointer, error) {
	db, conn, err := openWriteConn(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("checkpoint connection: %w", err)
	}
	c := &checkpointer{db: db, conn: conn, soft: ckptSoft, hard: ckptHard, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c, nil
}

// committed notes the WAL's size after a commit and wakes the
// checkpointer each time it has grown by soft frames since the last
// wake-up (a wake-up already pending stands). Not at every commit past
// soft: under sustained writes a checkpoint rarely ends with the WAL fully
// copied, so the WAL stays past soft, and a checkpointer woken by every
// commit would copy the B-trees' hot pages again and again (measured: more
// CPU per create than the automatic checkpoint). Runs on the writer's
// goroutine (the WAL hook, or a test's commit) only.
func (c *checkpointer) committed(frames int64) {
	c.frames.Store(frames)
	if frames < c.mark {
		c.mark = 0 // the WAL restarted
	}
	if frames >= c.mark+c.soft {
		c.mark = frames
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		// An error (a disk failure) is the next commit's to report; the
		// writer's own checkpoint past ckptHard bounds the WAL meanwhile.
		c.mu.Lock()
		c.conn.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
		c.mu.Unlock()
		c.runs.Add(1)
	}
}

// close stops the goroutine (after the checkpoint it may be running) and
// closes the connection.
func (c *checkpointer) close() {
	close(c.stop)
	<-c.done
	c.conn.Close()
	c.db.Close()
}
