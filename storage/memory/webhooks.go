package memory

import (
	"context"
	"sync"
	"time"

	"svc/storage"
)

// Webhooks is the memory engine's webhook delivery state.
type Webhooks struct {
	mu sync.Mutex
	m  map[[2]string]*memWebhook
}

type memWebhook struct {
	w          storage.Webhook
	owner      string
	leaseUntil time.Time
}

// NewWebhooks returns an empty store.
func NewWebhooks() *Webhooks { return &Webhooks{m: map[[2]string]*memWebhook{}} }

var _ storage.Webhooks = (*Webhooks)(nil)

func (s *Webhooks) CreateWebhook(_ context.Context, w *storage.Webhook) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{w.Tenant, w.ID}
	if _, ok := s.m[k]; ok {
		return storage.ErrExists
	}
	s.m[k] = &memWebhook{w: *w}
	return nil
}

func (s *Webhooks) GetWebhook(_ context.Context, tenant, id string) (*storage.Webhook, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.m[[2]string{tenant, id}]
	if !ok {
		return nil, storage.ErrNotFound
	}
	w := x.w
	return &w, nil
}

func (s *Webhooks) RecordWebhook(_ context.Context, w *storage.Webhook) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.m[[2]string{w.Tenant, w.ID}]
	if !ok {
		return storage.ErrNotFound
	}
	secret := x.w.Secret
	x.w = *w
	x.w.Secret = secret
	return nil
}

func (s *Webhooks) DeleteWebhook(_ context.Context, tenant, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, [2]string{tenant, id})
	return nil
}

func (s *Webhooks) ClaimWebhook(_ context.Context, tenant, id, owner string, now, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.m[[2]string{tenant, id}]
	if !ok {
		return false, storage.ErrNotFound
	}
	if x.owner != "" && x.owner != owner && x.leaseUntil.After(now) {
		return false, nil
	}
	x.owner, x.leaseUntil = owner, until
	return true, nil
}

func (s *Webhooks) ReleaseWebhook(_ context.Context, tenant, id, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x, ok := s.m[[2]string{tenant, id}]; ok && x.owner == owner {
		x.owner, x.leaseUntil = "", time.Time{}
	}
	return nil
}
