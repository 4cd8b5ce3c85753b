package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	msqlite "modernc.org/sqlite"
)

// The point reads (get by id, as at, by transaction) bypass database/sql:
// each holds a connection of its own pool for one prepared statement's
// step and reads the columns straight from the driver. database/sql added
// a pool lookup, a goroutine watching the request's context for every
// result set, a conversion pass and a second copy of the document per
// read, which was as much CPU as SQLite's own B-tree descent.

type rconn struct {
	c     driver.Conn
	stmts map[string]driver.Stmt
}

// fastPool is a fixed set of read-only driver connections.
type fastPool struct {
	conns chan *rconn
	all   []*rconn
}

func openFastPool(o Options, n int) (*fastPool, error) {
	p := &fastPool{conns: make(chan *rconn, n)}
	d := &msqlite.Driver{}
	for i := 0; i < n; i++ {
		c, err := d.Open(dsn(o, true))
		if err != nil {
			p.close()
			return nil, fmt.Errorf("sqlite: open: %w", err)
		}
		rc := &rconn{c: c, stmts: map[string]driver.Stmt{}}
		p.all = append(p.all, rc)
		p.conns <- rc
	}
	return p, nil
}

func (p *fastPool) close() {
	for _, rc := range p.all {
		for _, s := range rc.stmts {
			s.Close()
		}
		rc.c.Close()
	}
	p.all = nil
}

// one runs query with args and reads its first row into dest; found is
// false when there is no row.
func (p *fastPool) one(ctx context.Context, query string, args []driver.NamedValue, dest []driver.Value) (found bool, err error) {
	var rc *rconn
	select {
	case rc = <-p.conns:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { p.conns <- rc }()
	st := rc.stmts[query]
	if st == nil {
		st, err = rc.c.(driver.ConnPrepareContext).PrepareContext(ctx, query)
		if err != nil {
			return false, fmt.Errorf("sqlite: prepare: %w", err)
		}
		rc.stmts[query] = st
	}
	// The statement runs to its first row: no cancellation is needed for
	// an indexed point read, so the request's context is not watched.
	rows, err := st.(driver.StmtQueryContext).QueryContext(context.Background(), args)
	if err != nil {
		return false, fmt.Errorf("sqlite: query: %w", err)
	}
	defer rows.Close()
	if err := rows.Next(dest); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("sqlite: query: %w", err)
	}
	return true, nil
}
