package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"svc/predicate"
	"svc/storage"
)

// Search is the SQLite storage.Searcher. It reads a model's current (or
// as-at) revisions in one statement and evaluates the compiled condition
// in Go on each document's bytes as SQLite hands them over, copying only
// the matches; then sorts like the memory engine. A search on a request's
// path (direct search, stream data) that would examine more than
// Options.SearchScanLimit rows fails with storage.ErrScanBudget instead of
// holding a read connection and a core for as long as the model is large;
// an async search (SearchIDs, run by the bounded background pool) is not
// bounded by it, which is where the error's help sends a caller.
type Search struct {
	db *DB
	e  *Entities
}

// Search returns the searcher of db.
func (db *DB) Search() *Search { return &Search{db: db, e: db.Entities()} }

var _ storage.Searcher = (*Search)(nil)

// uuidText formats id into buf and returns it as a string aliasing buf,
// valid until buf is rewritten (long enough for Match).
func uuidText(buf *[36]byte, id []byte) string {
	const hex = "0123456789abcdef"
	j := 0
	for i, x := range id[:16] {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			buf[j] = '-'
			j++
		}
		buf[j], buf[j+1] = hex[x>>4], hex[x&15]
		j += 2
	}
	return unsafe.String(&buf[0], 36)
}

func (s *Search) scan(ctx context.Context, q *storage.SearchQuery, limit int) ([]*storage.Entity, error) {
	var rows *sql.Rows
	var err error
	if q.At == nil {
		rows, err = s.db.query(ctx, current, q.Tenant, q.Model.Name, q.Model.Version)
	} else {
		rows, err = s.db.query(ctx, asAt, q.Tenant, q.Model.Name, q.Model.Version, q.At.UnixNano())
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*storage.Entity
	var idBuf, txBuf [36]byte
	var m predicate.Meta
	n := 0
	for rows.Next() {
		if n++; limit > 0 && n > limit {
			return nil, fmt.Errorf("%w: more than %d rows of %s/%d (SVC_SQLITE_SEARCH_SCAN_LIMIT)", storage.ErrScanBudget, limit, q.Model.Name, q.Model.Version)
		}
		var e storage.Entity
		var id, txID []byte
		var change int
		var created, at int64
		var data sql.RawBytes
		if err := rows.Scan(&id, &e.Tenant, &e.Version, &e.Model.Name, &e.Model.Version, &e.State, &change, &txID, &e.Transition, &e.User,
			&created, &at, &data); err != nil {
			return nil, fmt.Errorf("sqlite: search: %w", err)
		}
		if q.Cond != nil {
			mp := &m
			if q.NoMeta {
				mp = nil
			} else {
				m = predicate.Meta{ID: uuidText(&idBuf, id), State: e.State, TransitionForLatestSave: e.Transition,
					TransactionID: uuidText(&txBuf, txID), CreationDate: time.Unix(0, created), LastUpdateTime: time.Unix(0, at)}
			}
			if !q.Cond.Match(data, mp) {
				continue
			}
		}
		e.ID, e.TxID = id16(id), id16(txID)
		e.ChangeType = changeNames[change]
		e.CreatedAt, e.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, at).UTC()
		e.Data = append([]byte{}, data...)
		out = append(out, &e)
		if n&1023 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search: %w", err)
	}
	return out, ctx.Err()
}

func (s *Search) Search(ctx context.Context, q *storage.SearchQuery) ([]*storage.Entity, error) {
	return s.search(ctx, q, s.db.opt.SearchScanLimit)
}

func (s *Search) search(ctx context.Context, q *storage.SearchQuery, limit int) ([]*storage.Entity, error) {
	es, err := s.scan(ctx, q, limit)
	if err != nil {
		return nil, err
	}
	storage.SortEntities(es, q.Sort)
	if q.Max > 0 && len(es) > q.Max+1 {
		es = es[:q.Max+1]
	}
	return es, nil
}

func (s *Search) SearchIDs(ctx context.Context, q *storage.SearchQuery) ([][16]byte, error) {
	es, err := s.search(ctx, q, 0)
	if err != nil {
		return nil, err
	}
	ids := make([][16]byte, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	return ids, nil
}

func (s *Search) Fetch(ctx context.Context, tenant string, ids [][16]byte, at *time.Time) ([]*storage.Entity, error) {
	out := make([]*storage.Entity, 0, len(ids))
	for _, id := range ids {
		var e *storage.Entity
		var err error
		if at == nil {
			e, err = s.e.Get(ctx, tenant, id)
		} else {
			e, err = s.e.GetAt(ctx, tenant, id, *at)
		}
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
