package sqlite

import (
	"fmt"

	"svc/storage"
)

// writeClaims maintains unique_claims inside tx's commit: the claims of
// deleted entities and of keyed rewrites are freed first (so two entities
// can swap values in one transaction), then the new claims inserted. The
// primary key refuses a value held by another entity; the single writer
// means no other commit can be between the check and the insert.
func writeClaims(w *wtx, tx *storage.Tx, curs map[[16]byte]*cur) error {
	if v, dup := storage.DuplicateClaim(tx); dup {
		return v
	}
	for i := range tx.Writes {
		wr := &tx.Writes[i]
		if (wr.Delete || wr.Keyed) && wr.ExpectVersion > 0 {
			if _, err := w.exec(`DELETE FROM unique_claims WHERE entity_id = ? AND tenant = ?`, wr.ID[:], tx.Tenant); err != nil {
				return fmt.Errorf("sqlite: freeing unique claims: %w", err)
			}
		}
	}
	for i := range tx.Writes {
		wr := &tx.Writes[i]
		if wr.Delete || len(wr.Claims) == 0 {
			continue
		}
		m := wr.Model
		if c := curs[wr.ID]; c != nil && wr.ExpectVersion > 0 {
			m = c.model
		}
		for _, c := range wr.Claims {
			res, err := w.exec(`INSERT INTO unique_claims (tenant, model_name, model_version, key_id, value, entity_id)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, tx.Tenant, m.Name, m.Version, c.Key, docArg(c.Value), wr.ID[:])
			if err != nil {
				return fmt.Errorf("sqlite: claiming unique keys: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return &storage.UniqueViolation{Model: m, Key: c.Key}
			}
		}
	}
	return nil
}
