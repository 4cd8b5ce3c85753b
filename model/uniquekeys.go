package model

import (
	"context"
	"fmt"
	"strings"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/storage"
)

// UniqueKey is one composite unique key: ordered scalar leaf paths.
type UniqueKey struct {
	ID     string   `json:"id"`
	Fields []string `json:"fields"`
}

// UniqueKeysOf decodes the keys stored on a model (storage.Model.UniqueKeys
// holds the JSON array this service writes; empty means none).
func UniqueKeysOf(m *storage.Model) ([]UniqueKey, error) {
	if len(m.UniqueKeys) == 0 {
		return nil, nil
	}
	var keys []UniqueKey
	if err := json.Unmarshal(m.UniqueKeys, &keys); err != nil {
		return nil, fmt.Errorf("stored unique keys of %s:%d: %w", m.Key.Name, m.Key.Version, err)
	}
	return keys, nil
}

// SetUniqueKeys replaces the model's whole key set; an empty list clears
// it. Check order (docs/decisions/0023-unique-keys.md): body (decoded by
// the adapter before this is called), model, lock state, definition.
func (s *Service) SetUniqueKeys(ctx context.Context, tenant string, key storage.ModelKey, keys []UniqueKey) (*ActionResult, error) {
	var stored []byte
	if len(keys) > 0 {
		b, err := json.Marshal(keys)
		if err != nil {
			return nil, fmt.Errorf("encoding unique keys: %w", err)
		}
		stored = b
	}
	_, err := s.update(ctx, tenant, key, "setting unique keys of", func(m *storage.Model) error {
		if m.State == Locked {
			return alreadyLocked(key, fmt.Sprintf("cannot change unique keys of entityModel{name=%s, version=%d}: the model is locked", key.Name, key.Version))
		}
		if err := checkUniqueKeys(key, keys, m.Schema); err != nil {
			return err
		}
		m.UniqueKeys = stored
		return nil
	})
	if err != nil {
		return nil, err
	}
	return result(key, true, fmt.Sprintf("unique keys set on model %s:%d", key.Name, key.Version)), nil
}

func badKeyDef(key storage.ModelKey, msg string) error {
	return apierr.New(apierr.InvalidUniqueKeyDefinition, msg, keyProps(key)...)
}

// checkUniqueKeys validates key definitions against a SIMPLE_VIEW schema.
func checkUniqueKeys(key storage.ModelKey, keys []UniqueKey, schema []byte) error {
	if len(keys) == 0 {
		return nil
	}
	leaves, err := scalarLeaves(schema)
	if err != nil {
		return err
	}
	ids := map[string]bool{}
	for _, k := range keys {
		if k.ID == "" {
			return badKeyDef(key, "unique key with an empty id")
		}
		if ids[k.ID] {
			return badKeyDef(key, fmt.Sprintf("duplicate key ID %q", k.ID))
		}
		ids[k.ID] = true
		if len(k.Fields) == 0 {
			return badKeyDef(key, fmt.Sprintf("key %q has no fields", k.ID))
		}
		seen := map[string]bool{}
		for _, f := range k.Fields {
			if seen[f] {
				return badKeyDef(key, fmt.Sprintf("key %q: duplicate field %q", k.ID, f))
			}
			seen[f] = true
			if !leaves.has(f) {
				return badKeyDef(key, fmt.Sprintf("key %q: field %q is not a known scalar leaf", k.ID, f))
			}
		}
	}
	return nil
}

// rootNode is the `$` node of a SIMPLE_VIEW model: data keys like `.a.b`
// and structural keys like `#.a`.
type rootNode map[string]json.RawMessage

// scalarLeaves reads the root node of a stored SIMPLE_VIEW model. Only the
// root node matters: a field inside an array has a `[*]` path and can never
// be a unique-key field.
func scalarLeaves(schema []byte) (rootNode, error) {
	if len(schema) == 0 {
		return rootNode{}, nil
	}
	var nodes map[string]json.RawMessage
	if err := json.Unmarshal(schema, &nodes); err != nil {
		return nil, fmt.Errorf("reading stored model: %w", err)
	}
	root := rootNode{}
	if raw, ok := nodes["$"]; ok && len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &root); err != nil {
			return nil, fmt.Errorf("reading stored model root: %w", err)
		}
	}
	return root, nil
}

// has reports whether path ($.a.b) is a non-array scalar leaf: the root
// node types it with a descriptor string and nothing nests below it.
func (r rootNode) has(path string) bool {
	if !strings.HasPrefix(path, "$.") || len(path) < 3 || strings.ContainsAny(path, "[]*") {
		return false
	}
	k := path[1:]
	v, ok := r[k]
	if !ok || len(v) == 0 || v[0] != '"' {
		return false
	}
	if _, ok := r["#"+k]; ok {
		return false
	}
	for other := range r {
		if len(other) > len(k) && strings.HasPrefix(other, k) && (other[len(k)] == '.' || other[len(k)] == '[') {
			return false
		}
	}
	return true
}
