package entity

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/buger/jsonparser"

	"svc/model"
	"svc/platform/apierr"
	"svc/storage"
)

// Unique keys (docs/decisions/0023-unique-keys.md). A model's keys are checked on every
// write that stores a document: create (object, array, collection), PUT,
// PATCH, collection update, transitions, scheduled fires and joined
// writes. The document the request brings is checked for partial keys
// (422 INVALID_UNIQUE_KEY) before the workflow runs, as the create check
// order puts it (docs/decisions/0014-entities.md); the document the workflow settles on is checked again
// and its values become the write's claims, which the storage engine
// enforces in the commit (409 UNIQUE_VIOLATION). Values compare byte for
// byte: a string by its decoded bytes, a number by its JSON text, so
// "1" and "1.0" are different values.

// compiledKey is one key with its field paths split into member names.
type compiledKey struct {
	id     string
	fields []string
	paths  [][]string
}

// keyCache holds the compiled keys per stored key-set bytes: every write
// of a keyed model needs them, and the set changes only while the model
// is unlocked.
type keyCache struct {
	mu sync.RWMutex
	m  map[string][]compiledKey
}

func (c *keyCache) get(m *storage.Model) ([]compiledKey, error) {
	if len(m.UniqueKeys) == 0 {
		return nil, nil
	}
	c.mu.RLock()
	ks, ok := c.m[string(m.UniqueKeys)]
	c.mu.RUnlock()
	if ok {
		return ks, nil
	}
	keys, err := model.UniqueKeysOf(m)
	if err != nil {
		return nil, err
	}
	ks = make([]compiledKey, len(keys))
	for i, k := range keys {
		ks[i] = compiledKey{id: k.ID, fields: k.Fields, paths: make([][]string, len(k.Fields))}
		for j, f := range k.Fields {
			ks[i].paths[j] = strings.Split(strings.TrimPrefix(f, "$."), ".")
		}
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) > 1024 {
		c.m = map[string][]compiledKey{}
	}
	c.m[string(m.UniqueKeys)] = ks
	c.mu.Unlock()
	return ks, nil
}

// claimsOf computes the claims of data under keys: one per key with every
// field set; a key with every field unset (absent or null) claims
// nothing; a key with only some set is 422 INVALID_UNIQUE_KEY.
func claimsOf(key storage.ModelKey, keys []compiledKey, data []byte) ([]storage.Claim, error) {
	var out []storage.Claim
	for _, k := range keys {
		var val []byte
		set := 0
		for _, p := range k.paths {
			raw, dt, _, err := jsonparser.Get(data, p...)
			if err != nil || dt == jsonparser.Null || dt == jsonparser.NotExist {
				val = append(val, 0)
				continue
			}
			set++
			tag := byte('o')
			switch dt {
			case jsonparser.String:
				tag = 's'
				if s, err := jsonparser.ParseString(raw); err == nil {
					raw = []byte(s)
				}
			case jsonparser.Number:
				tag = 'n'
			case jsonparser.Boolean:
				tag = 'b'
			}
			val = append(val, tag)
			val = binary.AppendUvarint(val, uint64(len(raw)))
			val = append(val, raw...)
		}
		switch set {
		case 0:
			continue
		case len(k.paths):
			out = append(out, storage.Claim{Key: k.id, Value: val})
		default:
			return nil, partialKey(key, k)
		}
	}
	return out, nil
}

func partialKey(key storage.ModelKey, k compiledKey) error {
	return apierr.New(apierr.InvalidUniqueKey, "unique key \""+k.id+"\" is partially set: its fields "+strings.Join(k.fields, ", ")+
		" must be all set or all unset", append(keyProps(key), apierr.P("uniqueKey", k.id))...)
}

// checkKeys is the pre-workflow check of a request's document: 422 when
// it sets only part of one of m's keys.
func (s *Service) checkKeys(m *storage.Model, data []byte) error {
	if len(m.UniqueKeys) == 0 {
		return nil
	}
	keys, err := s.keys.get(m)
	if err != nil {
		return err
	}
	_, err = claimsOf(m.Key, keys, data)
	return err
}

// keyWrite marks w, a write of a document of m, with the claims of its
// settled data.
func (s *Service) keyWrite(m *storage.Model, w *storage.Write) error {
	if len(m.UniqueKeys) == 0 {
		return nil
	}
	keys, err := s.keys.get(m)
	if err != nil || len(keys) == 0 {
		return err
	}
	w.Keyed = true
	w.Claims, err = claimsOf(m.Key, keys, w.Data)
	return err
}

// keyWriteOf is keyWrite for a write whose model is not at hand.
func (s *Service) keyWriteOf(ctx context.Context, tenant string, w *storage.Write) error {
	m, err := s.model(ctx, tenant, w.Model)
	if err != nil {
		return err
	}
	return s.keyWrite(m, w)
}

// uniqueViolation is the 409 of a taken value.
func uniqueViolation(v *storage.UniqueViolation) *apierr.Error {
	return &apierr.Error{Code: apierr.UniqueViolation, Message: "unique key \"" + v.Key + "\" of model " + v.Model.Name + ":" +
		strconv.Itoa(v.Model.Version) + " is taken: another entity holds the same value",
		Props: append(keyProps(v.Model), apierr.P("uniqueKey", v.Key)), Cause: v}
}

// commitErr gives a commit's unique violation its catalogue error.
func commitErr(err error) error {
	if err == nil || !errors.Is(err, storage.ErrUniqueViolation) {
		// errors.As's target escapes: keep the hot path free of it.
		return err
	}
	var v *storage.UniqueViolation
	if errors.As(err, &v) {
		return uniqueViolation(v)
	}
	return err
}
