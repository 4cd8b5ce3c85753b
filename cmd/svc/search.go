package main

import (
	"log/slog"

	"svc/platform/config"
	"svc/search"
)

// searchOptions maps the SVC_SEARCH_* variables onto the search service.
func searchOptions(cfg *config.Config, log *slog.Logger) search.Options {
	return search.Options{
		MaxSortKeys: cfg.SearchMaxSortKeys, Workers: cfg.SearchAsyncWorkers, Queue: cfg.SearchAsyncQueue,
		MaxPerTenant: cfg.SearchAsyncMaxPerTenant, Heartbeat: cfg.SearchJobHeartbeatInterval,
		StaleAfter: cfg.SearchJobStaleAfter, MaxAttempts: cfg.SearchJobMaxAttempts,
		SnapshotTTL: cfg.SearchSnapshotTTL, ReapInterval: cfg.SearchReapInterval,
		OnBackgroundErr: func(what string, err error) { log.Error(what, "err", err) },
	}
}
