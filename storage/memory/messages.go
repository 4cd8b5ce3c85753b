package memory

import (
	"context"
	"sync"

	"svc/storage"
)

// Messages is the in-memory storage.Messages.
type Messages struct {
	mu sync.RWMutex
	m  map[[16]byte]*storage.Message
}

func NewMessages() *Messages { return &Messages{m: map[[16]byte]*storage.Message{}} }

var _ storage.Messages = (*Messages)(nil)

func (s *Messages) PutMessage(_ context.Context, m *storage.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[m.ID]; ok {
		return storage.ErrExists
	}
	c := *m
	s.m[m.ID] = &c
	return nil
}

func (s *Messages) GetMessage(_ context.Context, tenant string, id [16]byte) (*storage.Message, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := s.m[id]
	if m == nil || m.Tenant != tenant {
		return nil, storage.ErrNotFound
	}
	c := *m
	return &c, nil
}

func (s *Messages) DeleteMessage(_ context.Context, tenant string, id [16]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.m[id]
	if m == nil || m.Tenant != tenant {
		return storage.ErrNotFound
	}
	delete(s.m, id)
	return nil
}

func (s *Messages) DeleteMessages(_ context.Context, tenant string, ids [][16]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if m := s.m[id]; m != nil && m.Tenant == tenant {
			delete(s.m, id)
		}
	}
	return nil
}
