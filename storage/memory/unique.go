package memory

import "svc/storage"

// claimKey is one unique-key value within a partition (a tenant's model
// version): the key id and the value's bytes.
type claimKey struct {
	key, val string
}

// checkClaims refuses tx when a write claims a value another live entity
// of its partition holds, unless this transaction frees it (deletes that
// entity or rewrites its keys), or a value another write of tx claims.
// The caller holds the locks of every partition tx writes, which is what
// makes check and apply one step: of two commits claiming one value, the
// second sees the first's claim.
func checkClaims(tx *storage.Tx, recs []wrec) error {
	if v, dup := storage.DuplicateClaim(tx); dup {
		return v
	}
	var freed map[uint32]bool
	for i := range tx.Writes {
		if w := &tx.Writes[i]; (w.Delete || w.Keyed) && len(recs[i].p.recClaims[recs[i].h]) > 0 {
			if freed == nil {
				freed = map[uint32]bool{}
			}
			freed[recs[i].h] = true
		}
	}
	for i := range tx.Writes {
		w, r := &tx.Writes[i], recs[i]
		if w.Delete || len(w.Claims) == 0 || r.p.claims == nil {
			continue
		}
		for _, c := range w.Claims {
			if owner := r.p.claims[claimKey{c.Key, string(c.Value)}]; owner != 0 && owner != r.h && !freed[owner] {
				return &storage.UniqueViolation{Model: r.p.key.model, Key: c.Key}
			}
		}
	}
	return nil
}

// applyClaims frees the claims tx's deletes and keyed writes replace, then
// records the new ones: freeing first lets two entities swap values in
// one transaction.
func applyClaims(tx *storage.Tx, recs []wrec) {
	for i := range tx.Writes {
		w, r := &tx.Writes[i], recs[i]
		if !w.Delete && !w.Keyed {
			continue
		}
		for _, k := range r.p.recClaims[r.h] {
			if r.p.claims[k] == r.h {
				delete(r.p.claims, k)
			}
		}
		delete(r.p.recClaims, r.h)
	}
	for i := range tx.Writes {
		w, r := &tx.Writes[i], recs[i]
		if w.Delete || len(w.Claims) == 0 {
			continue
		}
		p := r.p
		if p.claims == nil {
			p.claims = map[claimKey]uint32{}
			p.recClaims = map[uint32][]claimKey{}
		}
		cs := make([]claimKey, len(w.Claims))
		for j, c := range w.Claims {
			k := claimKey{c.Key, string(c.Value)}
			cs[j] = k
			p.claims[k] = r.h
		}
		p.recClaims[r.h] = cs
	}
}
