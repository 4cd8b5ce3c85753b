package postgres

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/predicate"
	"svc/storage"
)

var _ storage.StreamPager = (*Search)(nil)

// pathLit renders a JSON path as a text[] literal. Stream SQL inlines its
// paths (never parameters) so an expression index over the same path,
// spelt by the same function, can serve it.
func pathLit(segs []string) string {
	var b strings.Builder
	b.WriteString("'{")
	for i, s := range segs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range s {
			switch r {
			case '"', '\\':
				b.WriteByte('\\')
			case '\'':
				b.WriteByte('\'')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteString("}'::text[]")
	return b.String()
}

// quoteLit renders a SQL string literal.
func quoteLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// rangeExpr is the range key over the columns of alias x (x.doc, …);
// updated names the last-update column (updated_ns on entities, at_ns on
// revisions). cast types a keyset bound of the same kind.
func rangeExpr(k *storage.SortKey, x, updated string) (expr, cast string) {
	switch k.Field {
	case storage.SortCreated:
		return x + "created_ns", "::bigint"
	case storage.SortUpdated:
		return x + updated, "::bigint"
	case storage.SortState:
		return "(" + x + `state COLLATE "C")`, `::text COLLATE "C"`
	case storage.SortTransition:
		return "(NULLIF(" + x + `transition, '') COLLATE "C")`, `::text COLLATE "C"`
	case storage.SortID:
		return x + "id", "::uuid"
	case storage.SortTxID:
		return x + "tx_id", "::uuid"
	}
	v := "(" + x + "doc #> " + pathLit(k.Path) + ")"
	switch k.Class {
	case storage.SortNumber:
		return "(CASE WHEN jsonb_typeof(" + v + ") = 'number' THEN (" + v + ")::numeric END)", "::numeric"
	case storage.SortBool:
		return "(CASE WHEN jsonb_typeof(" + v + ") = 'boolean' THEN (" + v + ")::boolean END)", "::boolean"
	}
	return "((CASE WHEN jsonb_typeof(" + v + ") = 'string' THEN (" + v + ` #>> '{}') END) COLLATE "C")`, `::text COLLATE "C"`
}

// eqExpr is the text at a data path, as a composite index stores it.
func eqExpr(x string, path []string) string {
	return "(" + x + "doc #>> " + pathLit(path) + ")"
}

// streamSQL builds one keyset page over the snapshot at q.Search.At: the
// current rows unchanged since then (entities, served by its indexes)
// merged with the as-of revisions of entities changed since (few, under
// concurrent writes). Each branch is ordered and limited on its own, so
// the merge reads O(limit) rows of each. exact false: the condition SQL is
// a superset and the caller re-checks rows; limit then counts candidates.
func streamSQL(q *storage.StreamQuery, after *storage.StreamMark, limit, offset int) (string, []any, bool, error) {
	if q.Search.At == nil {
		return "", nil, false, fmt.Errorf("postgres: stream page without a point in time")
	}
	args := []any{q.Search.Tenant, q.Search.Model.Name, q.Search.Model.Version, q.Search.At.UnixNano()}
	dir := " ASC"
	cmp := " > "
	if q.Range.Desc {
		dir, cmp = " DESC", " < "
	}
	exact := true
	branch := func(x, updated string, cols predicate.SQLColumns, from string, hints bool) (string, error) {
		rv, cast := rangeExpr(&q.Range, x, updated)
		var sb strings.Builder
		sb.WriteString("(SELECT " + x + "id, " + x + "version, " + rv + " AS rv FROM " + from + " AND " + rv + " IS NOT NULL")
		if q.Search.Cond != nil {
			b := &predicate.SQLBuilder{Cols: cols, Args: args}
			frag, ex, err := q.Search.Cond.SQL(b)
			if err != nil {
				return "", fmt.Errorf("postgres: rendering condition: %w", err)
			}
			args, exact = b.Args, exact && ex
			sb.WriteString(" AND (" + frag + ")")
		}
		if hints {
			for _, h := range q.Eq {
				args = append(args, h.Value)
				sb.WriteString(" AND " + eqExpr(x, h.Path) + " = $" + strconv.Itoa(len(args)))
			}
		}
		if after != nil {
			args = append(args, after.Text, uuid.UUID(after.ID))
			v, id := "$"+strconv.Itoa(len(args)-1)+cast, "$"+strconv.Itoa(len(args))+"::uuid"
			// A row comparison, so the btree serving the order starts at the
			// bookmark instead of filtering from the first row.
			sb.WriteString(" AND (" + rv + ", " + x + "id)" + cmp + "(" + v + ", " + id + ")")
		}
		sb.WriteString(" ORDER BY " + rv + dir + ", " + x + "id" + dir)
		if limit > 0 {
			sb.WriteString(" LIMIT " + strconv.Itoa(limit+offset))
		}
		sb.WriteString(")")
		return sb.String(), nil
	}
	cur, err := branch("e.", "updated_ns", predicate.SQLColumns{Doc: "e.doc", ID: "e.id::text", State: "e.state",
		Transition: "e.transition", TransactionID: "e.tx_id::text", Created: tsOf("e.created_ns"), LastUpdated: tsOf("e.updated_ns")},
		`entities e WHERE e.tenant = $1 AND e.model_name = $2 AND e.model_version = $3 AND NOT e.deleted AND e.updated_ns <= $4`, true)
	if err != nil {
		return "", nil, false, err
	}
	hist, err := branch("h.", "at_ns", predicate.SQLColumns{Doc: "h.doc", ID: "h.id::text", State: "h.state",
		Transition: "h.transition", TransactionID: "h.tx_id::text", Created: tsOf("h.created_ns"), LastUpdated: tsOf("h.at_ns")},
		`(SELECT DISTINCT ON (r.id) r.id, r.version, r.state, r.change_type, r.tx_id, r.transition, r.created_ns, r.at_ns,
			convert_from(r.data, 'UTF8')::jsonb AS doc
		FROM entities e JOIN entity_revisions r ON r.tenant = e.tenant AND r.id = e.id
		WHERE e.tenant = $1 AND e.model_name = $2 AND e.model_version = $3 AND e.updated_ns > $4 AND e.created_ns <= $4
			AND r.at_ns <= $4
		ORDER BY r.id, r.version DESC) h WHERE h.change_type <> 'DELETED'`, false)
	if err != nil {
		return "", nil, false, err
	}
	urv := "u.rv"
	if _, cast := rangeExpr(&q.Range, "", ""); strings.Contains(cast, "COLLATE") {
		urv = `u.rv COLLATE "C"`
	}
	sql := "SELECT " + revSelect + ", u.rv::text FROM (" + cur + " UNION ALL " + hist + `) u
	JOIN entity_revisions r ON r.tenant = $1 AND r.id = u.id AND r.version = u.version
	ORDER BY ` + urv + dir + ", u.id" + dir
	if limit > 0 {
		sql += " LIMIT " + strconv.Itoa(limit)
	}
	if offset > 0 {
		sql += " OFFSET " + strconv.Itoa(offset)
	}
	return sql, args, exact, nil
}

// streamBatch is the candidate batch of a page whose condition SQL is a
// superset (rows are re-checked in Go).
const streamBatch = 512

// StreamPage reads one stream page by keyset (storage.StreamPager).
func (s *Search) StreamPage(ctx context.Context, q *storage.StreamQuery, fn func(e *storage.Entity, m storage.StreamMark) error) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	after, skip, emitted := q.After, q.Skip, 0
	for {
		limit, offset := q.Limit, skip
		sql, args, exact, err := streamSQL(q, after, limit, offset)
		if err != nil {
			return err
		}
		if !exact {
			// Positions count matching rows: skip in Go, read batches.
			limit, offset = streamBatch, 0
			if sql, args, _, err = streamSQL(q, after, limit, 0); err != nil {
				return err
			}
		}
		rows, err := c.Query(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
		if err != nil {
			return fmt.Errorf("postgres: stream page: %w", err)
		}
		n := 0
		var last *storage.StreamMark
		done := false
		for rows.Next() {
			var rv string
			e, err := scanRevisionRV(rows, &rv)
			if err != nil {
				rows.Close()
				return err
			}
			n++
			m := storage.StreamMark{Text: rv, ID: e.ID}
			last = &m
			if !exact {
				meta := metaOf(e)
				if !q.Search.Cond.Match(e.Data, &meta) {
					continue
				}
				if skip > 0 {
					skip--
					continue
				}
			}
			if err := fn(e, m); err != nil {
				rows.Close()
				return err
			}
			if emitted++; q.Limit > 0 && emitted >= q.Limit {
				done = true
				break
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: stream page: %w", err)
		}
		if exact || done || n < limit || limit <= 0 {
			return nil
		}
		after = last
	}
}

func scanRevisionRV(row pgx.Row, rv *string) (*storage.Entity, error) {
	var e storage.Entity
	var created, at int64
	var data []byte
	if err := row.Scan(&e.Tenant, &e.ID, &e.Version, &e.Model.Name, &e.Model.Version, &e.State, &e.ChangeType, &e.TxID,
		&e.Transition, &e.User, &created, &at, &data, rv); err != nil {
		return nil, fmt.Errorf("postgres: stream page: %w", err)
	}
	e.Data = data
	e.CreatedAt = unixNano(created)
	e.UpdatedAt = unixNano(at)
	return &e, nil
}

// ExplainStream renders PostgreSQL's plan (EXPLAIN (FORMAT JSON), no
// ANALYZE) of the first page of q and the statement.
func (s *Search) ExplainStream(ctx context.Context, q *storage.StreamQuery) (json.RawMessage, string, error) {
	sql, args, _, err := streamSQL(q, nil, q.Limit, 0)
	if err != nil {
		return nil, "", err
	}
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, "", err
	}
	defer c.Release()
	var plan []byte
	if err := c.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, append([]any{pgx.QueryExecModeExec}, args...)...).Scan(&plan); err != nil {
		return nil, "", fmt.Errorf("postgres: explain stream page: %w", err)
	}
	return plan, sql, nil
}

// IndexDDL is the CREATE INDEX the composite-index extension would run for
// ix (streamdata.Explainer); the index name is derived from ix.ID.
func (s *Search) IndexDDL(ix *storage.StreamIndex) (string, error) {
	c := *ix
	c.PgIndex = "sdix_" + hex.EncodeToString(ix.ID[:])
	return indexDDL(&c)
}
