package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/predicate"
	"svc/storage"
)

// Search is the PostgreSQL storage.Searcher. The condition is rendered to
// SQL over the JSONB document (EQUALS as containment, served by the GIN
// index on entities.doc) and sorted in SQL; only when the rendering is a
// superset are candidate rows re-checked in Go.
type Search struct {
	db *DB
	// stmtTimeout bounds one search statement (async scans); 0: the
	// pool's default.
	stmtTimeout time.Duration
}

// Search returns the searcher of db; stmtTimeout is
// SVC_POSTGRES_SEARCH_STATEMENT_TIMEOUT, the ceiling of async scans
// (SearchIDs); 0 keeps the pool default. Direct searches keep the pool's
// statement timeout.
func (db *DB) Search(stmtTimeout time.Duration) *Search {
	return &Search{db: db, stmtTimeout: stmtTimeout}
}

var _ storage.Searcher = (*Search)(nil)

// tsOf turns a Unix-nanosecond column into the timestamptz the predicate
// renderer compares (microseconds are finer than its millisecond bounds).
func tsOf(col string) string {
	return "(timestamptz 'epoch' + (" + col + " / 1000) * interval '1 microsecond')"
}

// searchSQL builds the statement: revision rows (tenant, id, …, data) of
// the model, live now or at q.At, that pass the condition, in order.
func searchSQL(q *storage.SearchQuery, idsOnly bool) (string, []any, bool, error) {
	args := []any{q.Tenant, q.Model.Name, q.Model.Version}
	var from string
	var cols predicate.SQLColumns
	if q.At == nil {
		from = `entities e JOIN entity_revisions r ON r.tenant = e.tenant AND r.id = e.id AND r.version = e.version
	WHERE e.tenant = $1 AND e.model_name = $2 AND e.model_version = $3 AND NOT e.deleted`
		cols = predicate.SQLColumns{Doc: "e.doc", ID: "e.id::text", State: "e.state", Transition: "e.transition",
			TransactionID: "e.tx_id::text", Created: tsOf("e.created_ns"), LastUpdated: tsOf("e.updated_ns")}
	} else {
		args = append(args, q.At.UnixNano())
		from = `(SELECT DISTINCT ON (r.id) ` + revSelect + `, convert_from(r.data, 'UTF8')::jsonb AS doc
	FROM entities e JOIN entity_revisions r ON r.tenant = e.tenant AND r.id = e.id
	WHERE e.tenant = $1 AND e.model_name = $2 AND e.model_version = $3 AND r.at_ns <= $4
	ORDER BY r.id, r.version DESC) r WHERE r.change_type <> 'DELETED'`
		cols = predicate.SQLColumns{Doc: "r.doc", ID: "r.id::text", State: "r.state", Transition: "r.transition",
			TransactionID: "r.tx_id::text", Created: tsOf("r.created_ns"), LastUpdated: tsOf("r.at_ns")}
	}
	exact := true
	var sb strings.Builder
	sb.WriteString("SELECT ")
	if idsOnly && q.Cond == nil {
		sb.WriteString("r.id")
	} else {
		sb.WriteString(revSelect)
	}
	sb.WriteString(" FROM ")
	sb.WriteString(from)
	if q.Cond != nil {
		b := &predicate.SQLBuilder{Cols: cols, Args: args}
		frag, ex, err := q.Cond.SQL(b)
		if err != nil {
			return "", nil, false, fmt.Errorf("postgres: rendering condition: %w", err)
		}
		args, exact = b.Args, ex
		sb.WriteString(" AND (")
		sb.WriteString(frag)
		sb.WriteString(")")
	}
	sb.WriteString(" ORDER BY ")
	for _, k := range q.Sort {
		var expr string
		switch k.Field {
		case storage.SortData:
			args = append(args, k.Path)
			v := cols.Doc + " #> $" + strconv.Itoa(len(args)) + "::text[]"
			switch k.Class {
			case storage.SortNumber:
				expr = "CASE WHEN jsonb_typeof(" + v + ") = 'number' THEN (" + v + ")::numeric END"
			case storage.SortBool:
				expr = "CASE WHEN jsonb_typeof(" + v + ") = 'boolean' THEN (" + v + ")::boolean END"
			default:
				expr = `CASE WHEN jsonb_typeof(` + v + `) = 'string' THEN (` + v + ` #>> '{}') END COLLATE "C"`
			}
		case storage.SortID:
			expr = "r.id"
		case storage.SortTxID:
			expr = "r.tx_id"
		case storage.SortState:
			expr = `NULLIF(r.state, '') COLLATE "C"`
		case storage.SortTransition:
			expr = `NULLIF(r.transition, '') COLLATE "C"`
		case storage.SortCreated:
			expr = "r.created_ns / 1000000"
		case storage.SortUpdated:
			expr = "r.at_ns / 1000000"
		}
		sb.WriteString(expr)
		if k.Desc {
			sb.WriteString(" DESC NULLS LAST, ")
		} else {
			sb.WriteString(" ASC NULLS LAST, ")
		}
	}
	sb.WriteString("r.id")
	if exact && q.Max > 0 {
		args = append(args, q.Max+1)
		sb.WriteString(" LIMIT $" + strconv.Itoa(len(args)))
	}
	return sb.String(), args, exact, nil
}

func metaOf(e *storage.Entity) predicate.Meta {
	return predicate.Meta{ID: uuid.UUID(e.ID).String(), State: e.State, TransitionForLatestSave: e.Transition,
		TransactionID: uuid.UUID(e.TxID).String(), CreationDate: e.CreatedAt, LastUpdateTime: e.UpdatedAt}
}

func (s *Search) run(ctx context.Context, q *storage.SearchQuery, idsOnly bool, fn func(e *storage.Entity)) error {
	sql, args, exact, err := searchSQL(q, idsOnly)
	if err != nil {
		return err
	}
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	// QueryExecModeExec plans each statement with its parameters (an
	// unnamed statement): a cached generic plan cannot see the
	// containment operand and walks the model index instead of GIN.
	args = append([]any{pgx.QueryExecModeExec}, args...)
	var rows pgx.Rows
	if idsOnly && s.stmtTimeout > 0 {
		// Async scans get their own ceiling for this transaction only.
		tx, err := c.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
		if err != nil {
			return fmt.Errorf("postgres: search: begin: %w", err)
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		if _, err := tx.Exec(ctx, "SELECT set_config('statement_timeout', $1, true)", strconv.FormatInt(s.stmtTimeout.Milliseconds(), 10)); err != nil {
			return fmt.Errorf("postgres: search: statement timeout: %w", err)
		}
		rows, err = tx.Query(ctx, sql, args...)
		if err != nil {
			return fmt.Errorf("postgres: search: %w", err)
		}
	} else {
		rows, err = c.Query(ctx, sql, args...)
		if err != nil {
			return fmt.Errorf("postgres: search: %w", err)
		}
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var e *storage.Entity
		if idsOnly && q.Cond == nil {
			e = &storage.Entity{}
			if err := rows.Scan(&e.ID); err != nil {
				return fmt.Errorf("postgres: search: %w", err)
			}
		} else {
			if e, err = scanRevision(rows, true); err != nil {
				return err
			}
			if !exact {
				m := metaOf(e)
				if !q.Cond.Match(e.Data, &m) {
					continue
				}
			}
		}
		fn(e)
		if n++; q.Max > 0 && n > q.Max {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: search: %w", err)
	}
	return nil
}

func (s *Search) Search(ctx context.Context, q *storage.SearchQuery) ([]*storage.Entity, error) {
	var out []*storage.Entity
	err := s.run(ctx, q, false, func(e *storage.Entity) { out = append(out, e) })
	return out, err
}

func (s *Search) SearchIDs(ctx context.Context, q *storage.SearchQuery) ([][16]byte, error) {
	var out [][16]byte
	err := s.run(ctx, q, true, func(e *storage.Entity) { out = append(out, e.ID) })
	return out, err
}

// Fetch reads a page of snapshot ids in one statement.
func (s *Search) Fetch(ctx context.Context, tenant string, ids [][16]byte, at *time.Time) ([]*storage.Entity, error) {
	if len(ids) == 0 {
		return []*storage.Entity{}, nil
	}
	byID := make(map[[16]byte]*storage.Entity, len(ids))
	add := func(e *storage.Entity) error { byID[e.ID] = e; return nil }
	es := s.db.Entities()
	var err error
	if at == nil {
		err = es.query(ctx, true, add, `SELECT `+revSelect+` FROM entities e JOIN entity_revisions r
		ON r.tenant = e.tenant AND r.id = e.id AND r.version = e.version
		WHERE e.tenant = $1 AND e.id = ANY($2) AND NOT e.deleted`, tenant, ids)
	} else {
		err = es.query(ctx, true, add, `SELECT * FROM (SELECT DISTINCT ON (r.id) `+revSelect+` FROM entity_revisions r
		WHERE r.tenant = $1 AND r.id = ANY($2) AND r.at_ns <= $3 ORDER BY r.id, r.version DESC) r
		WHERE r.change_type <> 'DELETED'`, tenant, ids, at.UnixNano())
	}
	if err != nil {
		return nil, err
	}
	out := make([]*storage.Entity, 0, len(ids))
	for _, id := range ids {
		if e := byID[id]; e != nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// Analyze refreshes the planner statistics of the entity tables (after a
// bulk load, before autovacuum gets to them).
func (db *DB) Analyze(ctx context.Context) error {
	c, err := db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	if _, err := c.Exec(ctx, "ANALYZE entities, entity_revisions"); err != nil {
		return fmt.Errorf("postgres: analyze: %w", err)
	}
	return nil
}
