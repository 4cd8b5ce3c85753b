package main

import (
	"context"
	"log/slog"

	"svc/cluster"
	"svc/config"
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
