package memory

import (
	"bytes"
	"context"
	"sort"
	"sync"

	"svc/storage"
)

type tenantID struct {
	tenant string
	id     [16]byte
}

// StreamConfigs is the in-memory storage.StreamConfigs.
type StreamConfigs struct {
	mu sync.RWMutex
	m  map[tenantID]*storage.StreamConfig
}

func NewStreamConfigs() *StreamConfigs {
	return &StreamConfigs{m: map[tenantID]*storage.StreamConfig{}}
}

var _ storage.StreamConfigs = (*StreamConfigs)(nil)

func copyConfig(c *storage.StreamConfig) *storage.StreamConfig {
	d := *c
	d.Def = append([]byte(nil), c.Def...)
	return &d
}

func (s *StreamConfigs) CreateStreamConfig(_ context.Context, c *storage.StreamConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tenantID{c.Tenant, c.ID}
	if _, ok := s.m[k]; ok {
		return storage.ErrExists
	}
	s.m[k] = copyConfig(c)
	return nil
}

func (s *StreamConfigs) UpdateStreamConfig(_ context.Context, c *storage.StreamConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tenantID{c.Tenant, c.ID}
	old, ok := s.m[k]
	if !ok {
		return storage.ErrNotFound
	}
	n := copyConfig(c)
	n.Owner, n.CreatedAt = old.Owner, old.CreatedAt
	s.m[k] = n
	return nil
}

func (s *StreamConfigs) GetStreamConfig(_ context.Context, tenant string, id [16]byte) (*storage.StreamConfig, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.m[tenantID{tenant, id}]
	if !ok {
		return nil, storage.ErrNotFound
	}
	return copyConfig(c), nil
}

func (s *StreamConfigs) ListStreamConfigs(_ context.Context, tenant string) ([]*storage.StreamConfig, error) {
	s.mu.RLock()
	out := []*storage.StreamConfig{}
	for k, c := range s.m {
		if k.tenant == tenant {
			out = append(out, copyConfig(c))
		}
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return bytes.Compare(out[i].ID[:], out[j].ID[:]) < 0
	})
	return out, nil
}

func (s *StreamConfigs) DeleteStreamConfig(_ context.Context, tenant string, id [16]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tenantID{tenant, id}
	if _, ok := s.m[k]; !ok {
		return storage.ErrNotFound
	}
	delete(s.m, k)
	return nil
}

// StreamIndexes is the in-memory storage.StreamIndexes: the memory engine
// scans, so an index is a declaration that is ready at once and changes
// only what index/list and query-plan report.
type StreamIndexes struct {
	mu sync.RWMutex
	m  map[tenantID]*storage.StreamIndex
}

func NewStreamIndexes() *StreamIndexes {
	return &StreamIndexes{m: map[tenantID]*storage.StreamIndex{}}
}

var _ storage.StreamIndexes = (*StreamIndexes)(nil)

func (s *StreamIndexes) CreateStreamIndex(_ context.Context, ix *storage.StreamIndex) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tenantID{ix.Tenant, ix.ID}
	if _, ok := s.m[k]; ok {
		return storage.ErrExists
	}
	for _, o := range s.m {
		if o.Tenant == ix.Tenant && o.Model == ix.Model && o.Name == ix.Name {
			return storage.ErrExists
		}
	}
	c := *ix
	c.EqPaths = append([]string(nil), ix.EqPaths...)
	c.Ready = true
	ix.Ready = true
	s.m[k] = &c
	return nil
}

func (s *StreamIndexes) ListStreamIndexes(_ context.Context, tenant string, model storage.ModelKey) ([]*storage.StreamIndex, error) {
	s.mu.RLock()
	out := []*storage.StreamIndex{}
	for _, ix := range s.m {
		if ix.Tenant == tenant && ix.Model == model {
			c := *ix
			c.EqPaths = append([]string(nil), ix.EqPaths...)
			out = append(out, &c)
		}
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return bytes.Compare(out[i].ID[:], out[j].ID[:]) < 0
	})
	return out, nil
}

func (s *StreamIndexes) DropStreamIndex(_ context.Context, tenant string, id [16]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tenantID{tenant, id}
	if _, ok := s.m[k]; !ok {
		return storage.ErrNotFound
	}
	delete(s.m, k)
	return nil
}
