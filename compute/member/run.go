package member

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff bounds of Run's reconnects.
const (
	minBackoff = 200 * time.Millisecond
	maxBackoff = 10 * time.Second
)

// Run keeps a member connected until ctx ends: it connects, serves until
// the stream ends, and reconnects with jittered exponential backoff (200 ms
// doubling to 10 s, reset after a successful join). With several
// endpoints each reconnect tries the next one round-robin, after a lost
// stream as after a failed connect: the node that dropped the member is
// likely the one that died. onJoin, when set, is called with each new
// connection. Run returns ctx's error.
func Run(ctx context.Context, cfg Config, h Handlers, onJoin func(*Member)) error {
	eps := cfg.endpoints()
	if len(eps) == 0 {
		eps = []string{""} // Connect reports the missing endpoint
	}
	backoff := minBackoff
	for i := 0; ; i = (i + 1) % len(eps) {
		one := cfg
		one.Endpoint, one.Endpoints = eps[i], nil
		m, err := Connect(ctx, one, h)
		if err == nil {
			backoff = minBackoff
			if onJoin != nil {
				onJoin(m)
			}
			select {
			case <-m.Done():
				if err := m.Err(); err != nil && cfg.Log != nil {
					cfg.Log.Warn("member: stream ended; reconnecting", "endpoint", eps[i], "error", err)
				}
				_ = m.Close()
			case <-ctx.Done():
				_ = m.Close()
				return ctx.Err()
			}
		} else if cfg.Log != nil {
			cfg.Log.Warn("member: connect failed; retrying", "endpoint", eps[i], "error", err, "backoff", backoff)
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		if err != nil {
			backoff = min(backoff*2, maxBackoff)
		}
	}
}
