package sqlite

import (
	"fmt"
	"sync/atomic"

	sqlite3 "modernc.org/sqlite/lib"
)

// Held read snapshots. A point read in autocommit mode opens a read
// transaction and closes it again: in WAL mode that is a shared lock on
// one of the WAL index's read marks taken and dropped (each an fcntl on the
// -shm file when no other connection of the process holds that mark), the
// WAL index header read and checked, and the pager's state built and torn
// down: over half of a served get's engine CPU in profiles. A point
// connection therefore keeps its read transaction open after a read (an
// explicit BEGIN; the snapshot is taken at the first read after it) and the
// next read on it skips all of that, as long as the snapshot is still the
// last committed state.
//
// That is what the generation says. The writer bumps it before it opens a
// group's transaction (odd: a group is being written) and again after the
// COMMIT returned, before any job of the group is answered (even). A read
// loads the generation before its snapshot is taken and keeps the snapshot
// only if the generation was even; it reuses a held snapshot only while the
// generation is still the one it loaded. Read-your-writes: a write
// acknowledged before a read began had its group's second bump before the
// read loaded the generation. If that bump came after the snapshot's load,
// the generation differs and the snapshot is dropped; if it came before,
// the COMMIT had returned before the snapshot was taken, which therefore
// holds the write. Extra bumps only cost a fresh snapshot.
//
// A held snapshot pins the WAL: a checkpoint copies no frame past the
// oldest snapshot, and the WAL restarts from its beginning only when no
// snapshot uses it. So no snapshot is kept while a group is being written
// (odd generation: the read runs in autocommit, as before), a connection
// handed back with a stale snapshot drops it at once, and the idle ones are
// swept by the pool's goroutine, woken by the writer's first bump when any
// snapshot is held: by the time the group's frames are written and
// checkpointed, readers pin no more of the WAL than in-flight reads did
// before. Without writes nothing needs checkpointing and a snapshot may be
// held indefinitely. Writes by another process (an operator's sqlite3
// shell) are not counted: they become visible to the point reads at svc's
// next write, or when the connection's snapshot is dropped.
type snapGen struct {
	n atomic.Uint64
	// held counts the connections holding a snapshot; the writer wakes
	// the sweeper only when there are some.
	held atomic.Int64
	wake chan struct{}
}

func newSnapGen() *snapGen { return &snapGen{wake: make(chan struct{}, 1)} }

// writing is the writer's first bump, before BEGIN: snapshots taken from
// now on are not kept, and those held are swept.
func (g *snapGen) writing() {
	if g == nil {
		return
	}
	g.n.Add(1)
	if g.held.Load() > 0 {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// written is the writer's second bump, after the group's COMMIT returned
// (or its transaction was rolled back) and before any job is answered.
func (g *snapGen) written() {
	if g == nil {
		return
	}
	g.n.Add(1)
}

// snapStmts are a point connection's transaction statements.
type snapStmts struct {
	begin, commit, rollback *cstmt
}

// ready makes rc's next statement read a snapshot no older than the last
// acknowledged write: it drops a stale snapshot, and opens a transaction
// to hold the next one when no group is being written. Called with the
// connection taken from the pool, before the read.
func (p *fastPool) ready(rc *rconn) {
	g := p.gen.n.Load()
	if rc.held {
		if rc.snap == g {
			return
		}
		p.drop(rc)
	}
	if g&1 != 0 {
		return // a group is being written: autocommit
	}
	if rc.snapStmts.begin == nil {
		var err error
		if rc.snapStmts.begin, err = rc.prepare("BEGIN"); err == nil {
			if rc.snapStmts.commit, err = rc.prepare("COMMIT"); err == nil {
				rc.snapStmts.rollback, err = rc.prepare("ROLLBACK")
			}
		}
		if err != nil {
			rc.snapStmts = snapStmts{}
			return // autocommit
		}
	}
	if rc.step0(rc.snapStmts.begin) != nil {
		return
	}
	// The snapshot is taken by the read's first step, after g was loaded.
	rc.held, rc.snap = true, g
	p.gen.held.Add(1)
}

// done is called after a read, before rc goes back to the pool: a
// snapshot the writer has moved past since it was taken is dropped now
// (failed is true when the read failed: the transaction is ended too).
func (p *fastPool) done(rc *rconn, failed bool) {
	if rc.held && (failed || p.gen.n.Load() != rc.snap) {
		p.drop(rc)
	}
}

// drop ends rc's read transaction. A read transaction has nothing to
// commit; should COMMIT fail, ROLLBACK ends it; if that fails too the
// connection is left in autocommit by SQLite or its next BEGIN fails and
// the reads run in autocommit.
func (p *fastPool) drop(rc *rconn) {
	if rc.step0(rc.snapStmts.commit) != nil {
		rc.step0(rc.snapStmts.rollback)
	}
	rc.held = false
	p.gen.held.Add(-1)
}

// step0 steps a statement that returns no rows and resets it.
func (rc *rconn) step0(s *cstmt) error {
	code := sqlite3.Xsqlite3_step(rc.tls, s.p)
	sqlite3.Xsqlite3_reset(rc.tls, s.p)
	if code != sqlite3.SQLITE_DONE {
		return fmt.Errorf("sqlite: %w", rc.errstr(code))
	}
	return nil
}

// sweeper drops the stale snapshots of idle connections when the writer
// begins a group, so that an idle pool does not pin the WAL.
func (p *fastPool) sweeper() {
	defer close(p.swept)
	for {
		select {
		case <-p.stop:
			return
		case <-p.gen.wake:
		}
		p.sweep()
	}
}

// sweep drops the stale snapshots of the connections idle in the pool.
// A connection in use drops its own when handed back (done).
func (p *fastPool) sweep() {
	for i := 0; i < p.n; i++ {
		select {
		case rc := <-p.conns:
			if rc.held && rc.snap != p.gen.n.Load() {
				p.drop(rc)
			}
			p.conns <- rc
		default:
			return
		}
	}
}
