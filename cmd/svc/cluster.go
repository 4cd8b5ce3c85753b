package main

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"svc/cluster"
	"svc/cluster/invalidate"
	"svc/model"
	"svc/platform/config"
	"svc/scheduler"
	"svc/storage"
	"svc/storage/modelcache"
	"svc/workflow"
)

// startCluster returns the node's membership: gossip when
// SVC_CLUSTER_ENABLED, else the cluster of one. A node that cannot join
// gets an error (serve prints it as one line and exits 1).
func startCluster(cfg *config.Config, log *slog.Logger) (cluster.Cluster, error) {
	self := cluster.Node{ID: cfg.NodeID, HTTPAddr: cfg.NodeAddr, GRPCAddr: cfg.GRPCNodeAddr}
	if !cfg.ClusterEnabled {
		if self.ID == "" {
			self.ID = "local"
		}
		return cluster.NewLocal(self, log), nil
	}
	// The join and the stability wait are bounded inside JoinGossip.
	return cluster.JoinGossip(context.Background(), cluster.GossipConfig{
		NodeID: cfg.NodeID, HTTPAddr: cfg.NodeAddr, GRPCAddr: cfg.GRPCNodeAddr,
		BindAddr: cfg.GossipAddr, Seeds: cfg.SeedNodes, HMACSecret: cfg.HMACSecret,
		StartupTimeout: cfg.StartupTimeout, StabilityWindow: cfg.GossipStabilityWindow, Log: log,
	})
}

// scheduledFire is the payload of cluster.TopicSchedulerFire: the task to
// fire; the firing node re-reads it and its entity.
type scheduledFire struct {
	Tenant string `json:"tenant"`
	ID     string `json:"id"`
}

// clusterScheduler adds SVC_SCHEDULER_COORDINATOR and
// SVC_SCHEDULER_DISTRIBUTION to o: only the live node with the smallest
// id scans, and with round-robin it hands each claimed task to the next
// live node over the cluster bus. start subscribes sched to the fires
// handed to this node; its stop waits for the handoffs in flight.
func clusterScheduler(cfg *config.Config, cl cluster.Cluster, o *scheduler.Options) (start func(*scheduler.Scheduler) (stop func())) {
	self := cl.Self().ID
	o.Coordinator = func() bool {
		live := cl.Live()
		return len(live) == 0 || live[0].ID == self
	}
	var sched atomic.Pointer[scheduler.Scheduler]
	var inflight sync.WaitGroup
	var closed atomic.Bool
	if cfg.SchedulerDistribution == "round-robin" && cfg.ClusterEnabled {
		var next atomic.Uint64
		o.Handoff = func(t storage.ScheduledTask) bool {
			live := cl.Live()
			to := live[int(next.Add(1)%uint64(len(live)))].ID
			if to == self || closed.Load() {
				return false
			}
			b, _ := json.Marshal(scheduledFire{Tenant: t.Tenant, ID: t.ID})
			inflight.Add(1)
			// Not on the scan goroutine: a peer that died unnoticed would
			// hold the scan for a TCP timeout.
			go func() {
				defer inflight.Done()
				if err := cl.SendTo(to, cluster.TopicSchedulerFire, b); err != nil {
					o.Log.Debug("scheduled transition: handoff failed; firing here", "node", to, "task", t.ID, "error", err)
					if s := sched.Load(); s != nil {
						s.FireClaimed(t)
					}
				}
			}()
			return true
		}
	}
	return func(s *scheduler.Scheduler) func() {
		sched.Store(s)
		cancel := cl.Subscribe(cluster.TopicSchedulerFire, func(p []byte) {
			var f scheduledFire
			if err := json.Unmarshal(p, &f); err != nil || f.ID == "" {
				return
			}
			s.FireClaimed(storage.ScheduledTask{Tenant: f.Tenant, ID: f.ID})
		})
		return func() {
			closed.Store(true)
			cancel()
			inflight.Wait()
		}
	}
}

// wireClusterWide subscribes this node to the other nodes' model and auth
// changes and makes its own model changes known; the returned function
// unsubscribes. jwt is nil in mock mode.
func wireClusterWide(cl cluster.Cluster, models *model.Service, sets *workflow.SetCache, modelStore storage.Models, fed *federationServices, jwt *jwtMode, timeout time.Duration, log *slog.Logger) func() {
	var storeForget func(string)
	if c, ok := modelStore.(*modelcache.Cache); ok {
		storeForget = c.Invalidate
	}
	stopModels := invalidate.Models(cl, models, sets, storeForget, log)
	var r invalidate.Refreshers
	if fed.Providers != nil {
		r.Providers = fed.Providers.Refresh
		r.Trusted = fed.Trusted.Refresh
	}
	if jwt != nil {
		r.Reconcile = jwt.cache.Reconcile
		r.Purge = jwt.cache.Purge
	}
	stopAuth := invalidate.Auth(cl, r, timeout, log)
	return func() {
		stopModels()
		stopAuth()
	}
}
