package memory

import (
	"context"
	"sort"
	"sync"
	"time"

	"svc/storage"
)

// RevokedTokens is the in-memory storage.RevokedTokens, keyed by jti.
type RevokedTokens struct {
	mu sync.Mutex
	m  map[string]storage.RevokedToken
}

// NewRevokedTokens returns an empty revocation store.
func NewRevokedTokens() *RevokedTokens {
	return &RevokedTokens{m: map[string]storage.RevokedToken{}}
}

func (s *RevokedTokens) RevokeToken(_ context.Context, r *storage.RevokedToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.m[r.JTI]; ok && !r.Until.After(cur.Until) {
		return nil
	}
	s.m[r.JTI] = *r
	return nil
}

func (s *RevokedTokens) ListRevokedTokens(_ context.Context, now time.Time) ([]*storage.RevokedToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*storage.RevokedToken{}
	for _, r := range s.m {
		if r.Until.After(now) {
			c := r
			out = append(out, &c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].JTI < out[j].JTI })
	return out, nil
}

func (s *RevokedTokens) PurgeRevokedTokens(_ context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for jti, r := range s.m {
		if r.Until.Before(before) {
			delete(s.m, jti)
			n++
		}
	}
	return n, nil
}
