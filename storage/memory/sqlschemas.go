package memory

import (
	"context"
	"sort"
	"sync"
	"time"

	"svc/storage"
)

// SQLSchemas is the in-memory storage.SQLSchemas and storage.SQLRunner: it
// keeps the configuration; there are no views, so queries and logins
// answer storage.ErrSQLNeedsPostgres.
type SQLSchemas struct {
	mu sync.RWMutex
	m  map[string]map[string]*storage.SQLSchema // tenant → id → schema
}

func NewSQLSchemas() *SQLSchemas {
	return &SQLSchemas{m: map[string]map[string]*storage.SQLSchema{}}
}

func cloneSQLSchema(s *storage.SQLSchema) *storage.SQLSchema {
	c := *s
	c.Tables = append([]byte(nil), s.Tables...)
	return &c
}

func (s *SQLSchemas) GetSQLSchema(_ context.Context, tenant, id string) (*storage.SQLSchema, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r, ok := s.m[tenant][id]; ok {
		return cloneSQLSchema(r), nil
	}
	return nil, storage.ErrNotFound
}

func (s *SQLSchemas) GetSQLSchemaByName(_ context.Context, tenant, name string) (*storage.SQLSchema, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, r := range s.m[tenant] {
		if r.Name == name {
			return cloneSQLSchema(r), nil
		}
	}
	return nil, storage.ErrNotFound
}

func (s *SQLSchemas) ListSQLSchemas(_ context.Context, tenant string) ([]*storage.SQLSchema, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*storage.SQLSchema, 0, len(s.m[tenant]))
	for _, r := range s.m[tenant] {
		out = append(out, cloneSQLSchema(r))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *SQLSchemas) SaveSQLSchema(_ context.Context, r *storage.SQLSchema, _ []storage.SQLView) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	byID := s.m[r.Tenant]
	if byID == nil {
		byID = map[string]*storage.SQLSchema{}
		s.m[r.Tenant] = byID
	}
	now := time.Now()
	r.CreatedAt, r.UpdatedAt = now, now
	for id, old := range byID {
		if old.Name == r.Name {
			r.ID, r.CreatedAt = id, old.CreatedAt
		}
	}
	byID[r.ID] = cloneSQLSchema(r)
	return nil
}

func (s *SQLSchemas) DeleteSQLSchema(_ context.Context, tenant, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[tenant][id]; !ok {
		return storage.ErrNotFound
	}
	delete(s.m[tenant], id)
	return nil
}

func (s *SQLSchemas) OpenSQL(context.Context, storage.SQLQuery) (storage.SQLCursor, error) {
	return nil, storage.ErrSQLNeedsPostgres
}

func (s *SQLSchemas) SQLCredentials(context.Context, string, string, bool) (storage.SQLLogin, error) {
	return storage.SQLLogin{}, storage.ErrSQLNeedsPostgres
}
