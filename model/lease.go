package model

import (
	"math/rand/v2"
	"time"
)

// WithCacheLease sets SVC_MODEL_CACHE_LEASE: how long a decoded model
// schema may serve before it is decoded again from the stored record, each
// expiry jittered by ±10 percent so entries of models written together do
// not all expire together. 0 keeps entries until their model's revision
// changes. A cached schema is never used past a revision change either way.
func WithCacheLease(d time.Duration) Option {
	return func(s *Service) { s.lease = d }
}

// withClock replaces the clock of lease expiry (tests).
func withClock(now func() time.Time) Option {
	return func(s *Service) { s.now = now }
}

// expiry is when an entry cached now stops serving; zero means never.
func (s *Service) expiry() time.Time {
	if s.lease <= 0 {
		return time.Time{}
	}
	jitter := time.Duration((rand.Float64()*0.2 - 0.1) * float64(s.lease))
	return s.clock().Add(s.lease + jitter)
}

func (s *Service) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// live reports whether entry p may still serve.
func (s *Service) live(p *parsed) bool {
	return p.expires.IsZero() || s.clock().Before(p.expires)
}
