// Package memory is the in-memory storage engine, svc's zero-setup default.
// Nothing survives a restart.
package memory

import (
	"context"
	"sort"
	"sync"
	"time"

	"svc/storage"
)

type modelID struct {
	tenant string
	key    storage.ModelKey
}

// Models is the in-memory storage.Models. Records are copied in and out so
// callers never share mutable state with the store.
type Models struct {
	mu sync.RWMutex
	m  map[modelID]*storage.Model
}

func NewModels() *Models { return &Models{m: map[modelID]*storage.Model{}} }

// cloneModel copies m with its byte slices, for storing a caller's record.
func cloneModel(m *storage.Model) *storage.Model {
	c := *m
	c.Schema = append([]byte(nil), m.Schema...)
	c.UniqueKeys = append([]byte(nil), m.UniqueKeys...)
	c.Workflows = append([]byte(nil), m.Workflows...)
	return &c
}

func (s *Models) GetModel(_ context.Context, tenant string, key storage.ModelKey) (*storage.Model, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.m[modelID{tenant, key}]
	if !ok {
		return nil, storage.ErrNotFound
	}
	return shareModel(m), nil
}

// shareModel copies the record but not its byte slices: stored slices are
// never written (PutModel stores a clone), and storage.Models lets readers
// share them.
func shareModel(m *storage.Model) *storage.Model {
	c := *m
	return &c
}

func (s *Models) ListModels(_ context.Context, tenant string) ([]*storage.Model, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*storage.Model
	for id, m := range s.m {
		if id.tenant == tenant {
			out = append(out, shareModel(m))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key.Name != out[j].Key.Name {
			return out[i].Key.Name < out[j].Key.Name
		}
		return out[i].Key.Version < out[j].Key.Version
	})
	return out, nil
}

func (s *Models) PutModel(_ context.Context, m *storage.Model) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := modelID{m.Tenant, m.Key}
	cur, ok := s.m[id]
	switch {
	case !ok && m.Revision != 0, ok && cur.Revision != m.Revision:
		return storage.ErrConflict
	}
	now := time.Now().UTC()
	if !ok {
		m.CreatedAt = now
	}
	m.UpdatedAt = now
	m.Revision++
	s.m[id] = cloneModel(m)
	return nil
}

func (s *Models) DeleteModel(_ context.Context, tenant string, key storage.ModelKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := modelID{tenant, key}
	if _, ok := s.m[id]; !ok {
		return storage.ErrNotFound
	}
	delete(s.m, id)
	return nil
}
