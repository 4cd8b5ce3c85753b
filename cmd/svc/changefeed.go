package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"svc/changefeed"
	"svc/cluster"
	"svc/platform/config"
)

// Cluster topics of the change feed (docs/decisions/0032-change-events.md).
const (
	// topicFeedSubscriptions: a node's subscriptions changed; every node
	// rebuilds its watched set from the store.
	topicFeedSubscriptions = "changefeed.subscriptions"
	// topicFeedCommitted: a node committed events; every node's hub reads
	// the log now instead of at its next poll.
	topicFeedCommitted = "changefeed.committed"
)

const (
	feedSyncInterval  = time.Minute     // the watched set's full sync, a backstop for lost announcements
	feedSweepInterval = 5 * time.Minute // ttl expiry and retention
	feedAnnounceEvery = 50 * time.Millisecond
)

// changeFeed is the change feed as serve wires it.
type changeFeed struct {
	svc     *changefeed.Service
	hub     *changefeed.Hub
	watched *changefeed.Watched
	// committed is the Recorder's hook: wake this node's hub and, in a
	// cluster, the others' (at most once per feedAnnounceEvery; the hubs'
	// poll covers the rest).
	committed func()
	stop      func()
}

// startChangeFeed builds the feed over st, fills the watched set before
// any write is served (a write to a watched model must record its event
// from the first request) and runs the hub and the periodic sync and
// sweep until stop.
func startChangeFeed(cfg *config.Config, st *stores, cl cluster.Cluster, log *slog.Logger) (*changeFeed, error) {
	w := &changefeed.Watched{}
	announce := func() {
		if err := cl.Publish(topicFeedSubscriptions, nil); err != nil {
			log.Warn("changefeed: announcing a subscription change", "error", err)
		}
	}
	svc := changefeed.New(st.Subscriptions, st.Changes, w, changefeed.Options{Log: log, Announce: announce, Webhook: webhookOptions(cfg, st)})
	ctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
	err := svc.Sync(ctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("change feed: %w", err)
	}
	hub := changefeed.NewHub(svc, changefeed.HubOptions{Log: log})
	hub.Start()
	hooks := changefeed.NewDeliverer(svc, hub)
	hooks.Start()
	var last atomic.Int64
	f := &changeFeed{svc: svc, hub: hub, watched: w}
	f.committed = func() {
		hub.Notify()
		if !cfg.ClusterEnabled {
			return
		}
		now, prev := time.Now().UnixNano(), last.Load()
		if now-prev >= int64(feedAnnounceEvery) && last.CompareAndSwap(prev, now) {
			_ = cl.Publish(topicFeedCommitted, nil)
		}
	}
	unsubs := cl.Subscribe(topicFeedSubscriptions, func([]byte) {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
		defer cancel()
		if err := svc.Sync(ctx); err != nil {
			log.Warn("changefeed: refreshing the watched set", "error", err)
		}
	})
	unsubc := cl.Subscribe(topicFeedCommitted, func([]byte) { hub.Notify() })
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		sync := time.NewTicker(feedSyncInterval)
		sweep := time.NewTicker(feedSweepInterval)
		defer sync.Stop()
		defer sweep.Stop()
		for {
			select {
			case <-done:
				return
			case <-sync.C:
				ctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
				if err := svc.Sync(ctx); err != nil {
					log.Warn("changefeed: refreshing the watched set", "error", err)
				}
				cancel()
			case <-sweep.C:
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if err := svc.Sweep(ctx); err != nil {
					log.Warn("changefeed: sweep", "error", err)
				}
				cancel()
			}
		}
	}()
	f.stop = func() {
		unsubs()
		unsubc()
		close(done)
		<-stopped
		hooks.Stop()
		hub.Stop()
	}
	return f, nil
}
