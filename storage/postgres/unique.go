package postgres

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// writeClaims maintains unique_claims for tx inside its transaction: the
// claims of deleted entities and of keyed rewrites are freed, then the new
// claims are inserted. The primary key of unique_claims decides races: an
// insert that meets a value another transaction has inserted but not yet
// committed waits for it, and ON CONFLICT DO NOTHING then skips the row,
// which is how a taken value shows (a missing row in RETURNING) without
// aborting the transaction.
//
// cur holds the locked rows of the updated entities, whose model the
// update's write need not name.
func writeClaims(ctx context.Context, ptx pgx.Tx, tx *storage.Tx, cur map[[16]byte]*locked) error {
	if v, dup := storage.DuplicateClaim(tx); dup {
		return v
	}
	var freed [][16]byte
	type row struct {
		model storage.ModelKey
		key   string
		val   []byte
		id    [16]byte
	}
	var rows []row
	for i := range tx.Writes {
		w := &tx.Writes[i]
		if (w.Delete || w.Keyed) && w.ExpectVersion > 0 {
			freed = append(freed, w.ID)
		}
		if !w.Delete {
			m := w.Model
			if l := cur[w.ID]; l != nil && w.ExpectVersion > 0 {
				m = storage.ModelKey{Name: l.modelName, Version: l.modelVersion}
			}
			for _, c := range w.Claims {
				rows = append(rows, row{m, c.Key, c.Value, w.ID})
			}
		}
	}
	if len(freed) > 0 {
		if _, err := ptx.Exec(ctx, `DELETE FROM unique_claims WHERE entity_id = ANY($1) AND tenant = $2`, freed, tx.Tenant); err != nil {
			return fmt.Errorf("postgres: freeing unique claims: %w", err)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	// One order for every writer, so two transactions claiming the same
	// values wait on each other in the same order instead of deadlocking.
	sort.Slice(rows, func(a, b int) bool {
		x, y := &rows[a], &rows[b]
		if x.model != y.model {
			if x.model.Name != y.model.Name {
				return x.model.Name < y.model.Name
			}
			return x.model.Version < y.model.Version
		}
		if x.key != y.key {
			return x.key < y.key
		}
		return bytes.Compare(x.val, y.val) < 0
	})
	names := make([]string, len(rows))
	versions := make([]int32, len(rows))
	keys := make([]string, len(rows))
	vals := make([][]byte, len(rows))
	ids := make([][16]byte, len(rows))
	for i, r := range rows {
		names[i], versions[i], keys[i], vals[i], ids[i] = r.model.Name, int32(r.model.Version), r.key, r.val, r.id
	}
	res, err := ptx.Query(ctx, `INSERT INTO unique_claims (tenant, model_name, model_version, key_id, value, entity_id)
		SELECT $1, n, v, k, x, e FROM unnest($2::text[], $3::int[], $4::text[], $5::bytea[], $6::uuid[]) WITH ORDINALITY AS c(n, v, k, x, e, o)
		ORDER BY o
		ON CONFLICT DO NOTHING RETURNING entity_id, key_id`, tx.Tenant, names, versions, keys, vals, ids)
	if err != nil {
		return fmt.Errorf("postgres: claiming unique keys: %w", err)
	}
	type got struct {
		id  [16]byte
		key string
	}
	inserted := make(map[got]bool, len(rows))
	for res.Next() {
		var g got
		if err := res.Scan(&g.id, &g.key); err != nil {
			res.Close()
			return fmt.Errorf("postgres: claiming unique keys: %w", err)
		}
		inserted[g] = true
	}
	res.Close()
	if err := res.Err(); err != nil {
		return fmt.Errorf("postgres: claiming unique keys: %w", err)
	}
	if len(inserted) == len(rows) {
		return nil
	}
	for _, r := range rows {
		if !inserted[got{r.id, r.key}] {
			return &storage.UniqueViolation{Model: r.model, Key: r.key}
		}
	}
	return nil
}
