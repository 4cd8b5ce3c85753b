package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"svc/storage"
)

// Connections made as SQL schema roles (POST /sql/query) are bounded in
// total and per tenant, and shared out without ever waiting on one
// another (docs/decisions/0034-sql-connection-budget.md):
//
//   - the set's lock only guards counters and the idle list: dialling,
//     closing and running queries happen outside it, so one tenant's slow
//     query or slow connect cannot hold up another tenant's query;
//   - a connection is open-and-idle or leased; only idle ones are ever
//     evicted to make room, least recently used first; a leased one is
//     never closed under its query;
//   - past a bound, with nothing idle to evict, the query is refused at
//     once (storage.SQLBusyError) rather than queued.

// Defaults of the bounds when Options leaves them 0.
const (
	defaultSQLMaxConns          = 10
	defaultSQLMaxConnsPerTenant = 4
	// sqlConnIdleTime closes a role connection idle this long.
	sqlConnIdleTime = time.Minute
)

// rolePoolSet is svc's budget of role connections, shared by all tenants.
type rolePoolSet struct {
	mu sync.Mutex
	// max and perTenant bound the connections open or being dialled.
	max, perTenant int
	open           int
	tenants        map[string]int
	roles          map[string]*roleState
	// idle holds connections not leased, least recently used first.
	idle   []*roleConn
	closed bool
	// janitor closes connections idle past sqlConnIdleTime; started with
	// the first connection, stopped by closeAll.
	stop chan struct{}
	done chan struct{}
}

// roleState counts a role's open connections and its generation: forget
// moves the generation on, and a connection of an older one is closed
// when it comes back instead of being reused.
type roleState struct {
	gen  uint64
	open int
}

// roleConn is one connection made as a schema role. While leased it is
// its cursor's alone; Release returns it.
type roleConn struct {
	set                    *rolePoolSet
	conn                   *pgx.Conn
	tenant, role, password string
	gen                    uint64
	idleSince              time.Time
}

func (db *DB) rolePools() *rolePoolSet {
	p := &db.sqlRoles
	p.mu.Lock()
	if p.max == 0 {
		p.max, p.perTenant = db.opt.SQLMaxConns, db.opt.SQLMaxConnsPerTenant
		if p.max <= 0 {
			p.max = defaultSQLMaxConns
		}
		if p.perTenant <= 0 {
			p.perTenant = defaultSQLMaxConnsPerTenant
		}
		p.perTenant = min(p.perTenant, p.max)
	}
	p.mu.Unlock()
	return p
}

// Exec, Query and Conn mirror pgxpool.Conn's, for the cursor.
func (c *roleConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return c.conn.Exec(ctx, sql, args...)
}

func (c *roleConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return c.conn.Query(ctx, sql, args...)
}

func (c *roleConn) Conn() *pgx.Conn { return c.conn }

// Release gives the connection back: kept idle for the role's next query,
// or closed (outside the lock) when it is broken, its role was forgotten
// or the set is closed.
func (c *roleConn) Release() {
	p := c.set
	p.mu.Lock()
	rs := p.roles[c.role]
	if p.closed || c.conn.IsClosed() || c.conn.PgConn().TxStatus() != 'I' || rs == nil || rs.gen != c.gen {
		p.dropLocked(c)
		p.mu.Unlock()
		c.close()
		return
	}
	c.idleSince = time.Now()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

func (c *roleConn) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.conn.Close(ctx)
}

// dropLocked gives c's slot back; the caller closes c after unlocking.
func (p *rolePoolSet) dropLocked(c *roleConn) {
	p.open--
	if p.tenants[c.tenant]--; p.tenants[c.tenant] <= 0 {
		delete(p.tenants, c.tenant)
	}
	if rs := p.roles[c.role]; rs != nil {
		if rs.open--; rs.open <= 0 {
			delete(p.roles, c.role)
		}
	}
}

// takeIdleLocked removes and returns the least recently used idle
// connection that match accepts, or nil.
func (p *rolePoolSet) takeIdleLocked(match func(*roleConn) bool) *roleConn {
	for i, c := range p.idle {
		if match(c) {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			return c
		}
	}
	return nil
}

// acquire leases a connection as role for tenant: an idle one of the role
// if there is one, else a new one within the bounds, evicting idle
// connections (the tenant's own first when it is at its bound) to make
// room. It never waits for another query.
func (p *rolePoolSet) acquire(ctx context.Context, url, tenant, role, password, schema, database string) (*roleConn, error) {
	for {
		c, err := p.lease(ctx, url, tenant, role, password, schema, database)
		if err != nil || c.idleSince.IsZero() || time.Since(c.idleSince) < time.Second {
			return c, err
		}
		// An idle connection may have been ended by the server (the
		// session watchdog, an administrator): check it, as pgxpool
		// does, and drop it for another if it is gone.
		if err := c.conn.Ping(ctx); err == nil {
			return c, nil
		}
		c.discard()
	}
}

// discard closes a leased connection and frees its slot.
func (c *roleConn) discard() {
	c.set.mu.Lock()
	c.set.dropLocked(c)
	c.set.mu.Unlock()
	c.close()
}

// lease is one attempt of acquire.
func (p *rolePoolSet) lease(ctx context.Context, url, tenant, role, password, schema, database string) (*roleConn, error) {
	var evicted []*roleConn
	defer func() {
		for _, c := range evicted {
			c.close()
		}
	}()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("postgres: closed")
	}
	var gen uint64
	if rs := p.roles[role]; rs != nil {
		gen = rs.gen
	}
	// Most recently used first: the warmest connection of this role.
	for i := len(p.idle) - 1; i >= 0; i-- {
		if c := p.idle[i]; c.role == role && c.password == password && c.gen == gen {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			p.mu.Unlock()
			return c, nil
		}
	}
	if p.tenants[tenant] >= p.perTenant {
		c := p.takeIdleLocked(func(c *roleConn) bool { return c.tenant == tenant })
		if c == nil {
			p.mu.Unlock()
			return nil, &storage.SQLBusyError{Setting: "SVC_SQL_MAX_CONNECTIONS_PER_TENANT", Limit: p.perTenant, Tenant: true}
		}
		p.dropLocked(c)
		evicted = append(evicted, c)
	}
	if p.open >= p.max {
		c := p.takeIdleLocked(func(*roleConn) bool { return true })
		if c == nil {
			p.mu.Unlock()
			return nil, &storage.SQLBusyError{Setting: "SVC_SQL_MAX_CONNECTIONS", Limit: p.max}
		}
		p.dropLocked(c)
		evicted = append(evicted, c)
	}
	if p.tenants == nil {
		p.tenants, p.roles = map[string]int{}, map[string]*roleState{}
	}
	p.open++
	p.tenants[tenant]++
	rs := p.roles[role]
	if rs == nil {
		rs = &roleState{}
		p.roles[role] = rs
	}
	rs.open++
	gen = rs.gen
	p.startJanitorLocked()
	p.mu.Unlock()

	c := &roleConn{set: p, tenant: tenant, role: role, password: password, gen: gen}
	conn, err := dialRole(ctx, url, role, password, schema, database)
	if err != nil {
		p.mu.Lock()
		p.dropLocked(c)
		p.mu.Unlock()
		return nil, err
	}
	c.conn = conn
	return c, nil
}

// dialRole connects as a schema role: the session user then has no rights
// beyond the role's (SET ROLE from svc's own session would leave
// set_config('role', …) open to the statement, since PostgreSQL checks it
// against the session user).
func dialRole(ctx context.Context, url, role, password, schema, database string) (*pgx.Conn, error) {
	cc, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, errors.New("postgres: SVC_POSTGRES_URL does not parse as a connection URL")
	}
	cc.User, cc.Password = role, password
	if database != "" {
		cc.Database = database // the schema's own (sqlschema_tenantdb.go)
	}
	cc.RuntimeParams["search_path"] = schema
	cc.RuntimeParams["application_name"] = "svc-sql"
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "53300" {
			// too_many_connections: the role's own CONNECTION LIMIT (the
			// tenant's direct logins count there too) or the server's.
			if strings.Contains(pe.Message, "role") {
				return nil, &storage.SQLBusyError{Setting: "the schema role's CONNECTION LIMIT", Tenant: true}
			}
			return nil, &storage.SQLBusyError{Setting: "the server's max_connections"}
		}
		return nil, fmt.Errorf("postgres: connecting as the SQL schema role: %w", err)
	}
	return conn, nil
}

// forget makes role's connections unusable: idle ones close now, leased
// ones when their query ends (after a password rotation or a drop).
func (p *rolePoolSet) forget(role string) {
	var stale []*roleConn
	p.mu.Lock()
	if rs := p.roles[role]; rs != nil {
		rs.gen++
		for {
			c := p.takeIdleLocked(func(c *roleConn) bool { return c.role == role })
			if c == nil {
				break
			}
			p.dropLocked(c)
			stale = append(stale, c)
		}
		if rs.open == 0 {
			delete(p.roles, role)
		}
	}
	p.mu.Unlock()
	for _, c := range stale {
		c.close()
	}
}

// startJanitorLocked starts the idle reaper once.
func (p *rolePoolSet) startJanitorLocked() {
	if p.stop != nil {
		return
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.janitor(p.stop, p.done)
}

func (p *rolePoolSet) janitor(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(sqlConnIdleTime / 2)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		var old []*roleConn
		cut := time.Now().Add(-sqlConnIdleTime)
		p.mu.Lock()
		for {
			c := p.takeIdleLocked(func(c *roleConn) bool { return c.idleSince.Before(cut) })
			if c == nil {
				break
			}
			p.dropLocked(c)
			old = append(old, c)
		}
		p.mu.Unlock()
		for _, c := range old {
			c.close()
		}
	}
}

// closeAll closes the idle connections and stops the janitor; leased ones
// close when their cursors release them.
func (p *rolePoolSet) closeAll() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	for _, c := range idle {
		p.dropLocked(c)
	}
	stop, done := p.stop, p.done
	p.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
	if stop != nil {
		close(stop)
		<-done
	}
}

// stats reports the set's open connections and those of tenant, for tests.
func (p *rolePoolSet) stats(tenant string) (open, ofTenant, idle int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open, p.tenants[tenant], len(p.idle)
}
