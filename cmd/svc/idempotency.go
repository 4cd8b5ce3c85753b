package main

import (
	"context"
	"log/slog"
	"time"

	"svc/idempotency"
	"svc/platform/config"
	"svc/storage"
)

// startIdempotency builds the Idempotency-Key service over the engine's
// keys and sweeps the keys past SVC_IDEMPOTENCY_RETENTION every tenth of
// it (at most hourly, at least every minute) until stop. In a cluster
// every node sweeps; the deletes are the same.
func startIdempotency(cfg *config.Config, keys storage.IdempotencyKeys, log *slog.Logger) (svc *idempotency.Service, stop func()) {
	svc = idempotency.New(keys, idempotency.Options{Retention: cfg.IdempotencyRetention})
	every := min(max(cfg.IdempotencyRetention/10, time.Minute), time.Hour)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if _, err := svc.Sweep(ctx); err != nil {
					log.Warn("idempotency: sweep", "error", err)
				}
				cancel()
			}
		}
	}()
	return svc, func() { close(done); <-stopped }
}
