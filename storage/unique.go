package storage

import (
	"errors"
	"fmt"
)

// Unique keys (docs/decisions/0023-unique-keys.md): a model may declare composite unique
// keys; every live entity of the model holds one claim per key whose
// fields it sets, and no two live entities of one (tenant, model, version)
// hold the same claim. Engines enforce this in the commit itself (memory
// under the partition locks, PostgreSQL with a unique index), so of two
// concurrent writers of one value exactly one commits.

// Claim is one unique-key value an entity holds: the key's id and the
// byte-exact encoding of its field values (entity.claimsOf).
type Claim struct {
	Key   string
	Value []byte
}

// ErrUniqueViolation: a write claims a unique-key value another live
// entity of its model holds (or another write of the same transaction
// claims). Not retryable. Engines return a *UniqueViolation.
var ErrUniqueViolation = errors.New("storage: unique key taken")

// UniqueViolation names the key whose value is taken.
type UniqueViolation struct {
	Model ModelKey
	Key   string
}

func (e *UniqueViolation) Error() string {
	return fmt.Sprintf("storage: unique key %q of %s:%d taken", e.Key, e.Model.Name, e.Model.Version)
}

func (e *UniqueViolation) Unwrap() error { return ErrUniqueViolation }

// TouchesClaims reports whether committing tx changes any claim: a write
// of a keyed model, or a delete (which frees whatever its entity held).
// Engines skip all claim work otherwise, so models without keys pay
// nothing.
func TouchesClaims(tx *Tx) bool {
	for i := range tx.Writes {
		if tx.Writes[i].Keyed || tx.Writes[i].Delete {
			return true
		}
	}
	return false
}

// DuplicateClaim finds two writes of tx that claim the same value of one
// model's key; ok is false when there is none.
func DuplicateClaim(tx *Tx) (v *UniqueViolation, ok bool) {
	type k struct {
		model    ModelKey
		key, val string
	}
	var seen map[k]bool
	for i := range tx.Writes {
		w := &tx.Writes[i]
		if w.Delete {
			continue
		}
		for _, c := range w.Claims {
			if seen == nil {
				seen = map[k]bool{}
			}
			x := k{w.Model, c.Key, string(c.Value)}
			if seen[x] {
				return &UniqueViolation{Model: w.Model, Key: c.Key}, true
			}
			seen[x] = true
		}
	}
	return nil, false
}
