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
	// topicFeedLive: a node's live streams watch these models
	// (changefeed.LiveAnnouncement, with a lease); every other node
	// records them until the lease lapses or the node announces otherwise.
	topicFeedLive = "changefeed.live"
)

const (
	feedSyncInterval  = time.Minute // the watched set's full sync, a backstop for lost announcements
	feedAnnounceEvery = 50 * time.Millisecond
)

// feedLiveRefresh: a node with live streams re-announces their models
// every quarter of the lease (SVC_CHANGEFEED_LIVE_LEASE); a receiver keeps
// them for the lease without a newer announcement (three refreshes may be
// lost), so a dead node's models stop being recorded within a lease and a
// check.
func feedLiveRefresh(cfg *config.Config) time.Duration { return cfg.ChangeFeedLiveLease / 4 }

// feedOptions are the change feed's settings (config.changefeed).
func feedOptions(cfg *config.Config, log *slog.Logger, announce func()) changefeed.Options {
	return changefeed.Options{Retention: cfg.ChangeFeedRetention, BacklogMaxEvents: int64(cfg.ChangeFeedBacklogMaxEvents),
		DefaultTTL: cfg.ChangeFeedSubscriptionTTL, Log: log, Announce: announce}
}

// feedHubOptions: an attached durable stream checks its subscription (ttl
// stamp, detach, delete) every minute, or every sweep when that is
// shorter, so a sweep's detach reaches it within one sweep.
func feedHubOptions(cfg *config.Config, log *slog.Logger) changefeed.HubOptions {
	return changefeed.HubOptions{Log: log, Touch: min(time.Minute, cfg.ChangeFeedSweepInterval), Buffer: cfg.ChangeFeedLiveBuffer,
		Stall: cfg.ChangeFeedStallTimeout}
}

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
	opts := feedOptions(cfg, log, announce)
	opts.Webhook = webhookOptions(cfg, st)
	var svc *changefeed.Service
	self := cl.Self().ID
	announceLive := func(hello bool) {
		if err := cl.Publish(topicFeedLive, svc.LiveAnnouncement(self, cfg.ChangeFeedLiveLease, hello)); err != nil {
			log.Warn("changefeed: announcing live streams", "error", err)
		}
	}
	if cfg.ClusterEnabled {
		opts.AnnounceLive = func() { announceLive(false) }
	}
	svc = changefeed.New(st.Subscriptions, st.Changes, w, opts)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
	err := svc.Sync(ctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("change feed: %w", err)
	}
	hub := changefeed.NewHub(svc, feedHubOptions(cfg, log))
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
	unsubl := func() {}
	if cfg.ClusterEnabled {
		unsubl = cl.Subscribe(topicFeedLive, func(b []byte) {
			hello, err := svc.ApplyLive(self, b)
			if err != nil {
				log.Warn("changefeed: live announcement", "error", err)
			}
			if hello && svc.HasLive() {
				announceLive(false)
			}
		})
		// This node knows no other node's live streams yet: ask.
		announceLive(true)
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		sync := time.NewTicker(feedSyncInterval)
		sweep := time.NewTicker(cfg.ChangeFeedSweepInterval)
		live := time.NewTicker(feedLiveRefresh(cfg))
		defer sync.Stop()
		defer sweep.Stop()
		defer live.Stop()
		for {
			select {
			case <-done:
				return
			case <-live.C:
				if !cfg.ClusterEnabled {
					continue
				}
				svc.ExpireLive()
				if svc.HasLive() {
					announceLive(false)
				}
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
		unsubl()
		close(done)
		<-stopped
		hooks.Stop()
		hub.Stop()
	}
	return f, nil
}
