package cluster

import (
	"bufio"
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
	"github.com/hashicorp/memberlist"
)

// GossipConfig are the SVC_* cluster settings membership needs.
type GossipConfig struct {
	// NodeID is SVC_NODE_ID, the memberlist node name.
	NodeID string
	// HTTPAddr is SVC_NODE_ADDR, GRPCAddr SVC_GRPC_NODE_ADDR.
	HTTPAddr, GRPCAddr string
	// BindAddr is SVC_GOSSIP_ADDR, [host]:port; the port is also the
	// advertised port.
	BindAddr string
	// Seeds are SVC_SEED_NODES; the bind address itself is left out.
	Seeds []string
	// HMACSecret is SVC_HMAC_SECRET in hex; the gossip key is derived
	// from it.
	HMACSecret string
	// StartupTimeout bounds the join (SVC_STARTUP_TIMEOUT);
	// StabilityWindow is SVC_GOSSIP_STABILITY_WINDOW.
	StartupTimeout, StabilityWindow time.Duration
	Log                             *slog.Logger
}

// GossipKey derives the memberlist key from the hex HMAC secret: HKDF-SHA256
// with its own info string, so the gossip key never equals the key of the
// transaction tokens or of the internal route, all three coming from the
// one secret. 32 bytes make memberlist use AES-256-GCM.
func GossipKey(hexSecret string) ([]byte, error) {
	secret, err := hex.DecodeString(hexSecret)
	if err != nil || len(secret) == 0 {
		return nil, errors.New("SVC_HMAC_SECRET must be hex")
	}
	return hkdf.Key(sha256.New, secret, nil, "svc-gossip-v1", 32)
}

// Gossip is membership over hashicorp/memberlist: the live nodes with
// their metadata, and the Bus as memberlist user messages.
type Gossip struct {
	cfg  GossipConfig
	log  *slog.Logger
	ml   *memberlist.Memberlist
	subs *subscribers

	mu   sync.RWMutex
	self Node
	live map[string]Node // by memberlist name (= node id); self included
	// sorted is Live's answer, rebuilt on every change (Live is read far
	// more often than membership changes).
	sorted []Node
	left   bool
	// sends are Publish's sends in flight; Close waits for them.
	sends sync.WaitGroup
	// rejoin is the founder's background join (rejoin.go); Close stops
	// it and waits for it.
	rejoin rejoinLoop
}

// JoinGossip starts memberlist on cfg.BindAddr and joins the cluster
// through cfg.Seeds: retried with backoff from 500 ms up to 10 s until
// cfg.StartupTimeout, then it waits until the member count has held for
// cfg.StabilityWindow. An error means the node must not serve.
func JoinGossip(ctx context.Context, cfg GossipConfig) (*Gossip, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	key, err := GossipKey(cfg.HMACSecret)
	if err != nil {
		return nil, err
	}
	host, portStr, err := net.SplitHostPort(cfg.BindAddr)
	if err != nil {
		return nil, fmt.Errorf("SVC_GOSSIP_ADDR %q: %w", cfg.BindAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("SVC_GOSSIP_ADDR %q: bad port", cfg.BindAddr)
	}
	g := &Gossip{cfg: cfg, log: cfg.Log, subs: newSubscribers(cfg.Log),
		self: Node{ID: cfg.NodeID, HTTPAddr: cfg.HTTPAddr, GRPCAddr: cfg.GRPCAddr},
		live: map[string]Node{}}
	mc := memberlist.DefaultLANConfig()
	mc.Name = cfg.NodeID
	if host == "" {
		host = "0.0.0.0"
	}
	mc.BindAddr, mc.BindPort = host, port
	mc.AdvertisePort = port
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		mc.AdvertiseAddr = host
	}
	mc.SecretKey = key
	mc.Delegate = delegate{g}
	mc.Events = events{g}
	// memberlist's own lines go to slog at DEBUG: they are about the
	// protocol, and a refused stranger (wrong secret) is no operator event.
	mc.Logger = log.New(slogWriter{cfg.Log}, "", 0)
	ml, err := memberlist.Create(mc)
	if err != nil {
		g.subs.close()
		return nil, fmt.Errorf("starting gossip on %s: %w", cfg.BindAddr, err)
	}
	g.ml = ml
	if err := g.join(ctx); err != nil {
		g.shutdown()
		return nil, err
	}
	g.settle(ctx)
	return g, nil
}

// seeds are the configured seeds less this node's own address, and
// whether the list named this node (isSelf: the bind address itself, or
// the bind port on an address of this machine).
func (g *Gossip) seeds(ctx context.Context) (others []string, namedSelf bool) {
	for _, s := range g.cfg.Seeds {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
		case isSelf(ctx, s, g.cfg.BindAddr):
			namedSelf = true
		default:
			others = append(others, s)
		}
	}
	return others, namedSelf
}

func (g *Gossip) join(ctx context.Context) error {
	seeds, namedSelf := g.seeds(ctx)
	if len(seeds) == 0 {
		g.log.Info("no seeds configured, proceeding as cluster of one", "node", g.cfg.NodeID)
		return nil
	}
	deadline := time.Now().Add(g.cfg.StartupTimeout)
	backoff := 500 * time.Millisecond
	for {
		n, err := g.ml.Join(seeds)
		if err == nil && n > 0 {
			g.log.Info("joined the cluster", "node", g.cfg.NodeID, "contacted", n, "members", g.ml.NumMembers())
			return nil
		}
		if err == nil {
			err = errors.New("no seed answered")
		}
		if namedSelf {
			// A node its own seed list names may found the cluster: no
			// other seed is up, so it serves as a cluster of one at once
			// and keeps joining the other seeds in the background; the
			// others join it as they start (docs/decisions/0026-cluster.md).
			g.log.Info("no other seed answered; serving as the first node of the cluster, the others join as they start",
				"node", g.cfg.NodeID, "seeds", strings.Join(seeds, ","))
			g.rejoin.start(g, seeds)
			return nil
		}
		wait := min(backoff, time.Until(deadline))
		if wait <= 0 {
			// memberlist's errors span lines; the exit message is one.
			return fmt.Errorf("cannot join the cluster through SVC_SEED_NODES %s within SVC_STARTUP_TIMEOUT %s (is SVC_HMAC_SECRET the cluster's?): %s",
				strings.Join(seeds, ","), g.cfg.StartupTimeout, strings.Join(strings.Fields(err.Error()), " "))
		}
		g.log.Debug("cluster join failed; retrying", "error", err, "in", wait)
		select {
		case <-ctx.Done():
			return fmt.Errorf("joining the cluster: %w", ctx.Err())
		case <-time.After(wait):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

// settle waits until the member count has stayed the same for the
// stability window, polling every 200 ms, so a node does not start
// scheduling or routing on a half-seen membership. It gives up waiting
// (and goes on) after the startup timeout.
func (g *Gossip) settle(ctx context.Context) {
	if g.cfg.StabilityWindow <= 0 {
		return
	}
	giveUp := time.Now().Add(g.cfg.StartupTimeout)
	last, since := g.ml.NumMembers(), time.Now()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for time.Since(since) < g.cfg.StabilityWindow {
		if time.Now().After(giveUp) {
			g.log.Warn("cluster membership still changing after SVC_STARTUP_TIMEOUT; serving anyway", "members", last)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n := g.ml.NumMembers(); n != last {
			last, since = n, time.Now()
		}
	}
}

func (g *Gossip) Self() Node {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.self
}

// Live returns the live nodes, self included, sorted by ID. The slice is
// the caller's; the nodes' Tags maps are shared and must not be modified.
func (g *Gossip) Live() []Node {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.sorted == nil {
		return []Node{g.self}
	}
	return slices.Clone(g.sorted)
}

// resort rebuilds the sorted view Live copies; g.mu is held.
func (g *Gossip) resort() {
	out := make([]Node, 0, len(g.live)+1)
	out = append(out, g.self)
	for id, n := range g.live {
		if id != g.self.ID {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	g.sorted = out
}

// Lookup finds a live node; its Tags map is shared and must not be
// modified.
func (g *Gossip) Lookup(id string) (Node, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if id == g.self.ID {
		return g.self, true
	}
	n, ok := g.live[id]
	return n, ok
}

// SetTags replaces this node's advertised compute-member tags and spreads
// them with memberlist's UpdateNode.
func (g *Gossip) SetTags(tags map[string][]string) {
	g.mu.Lock()
	g.self.Tags = cloneTags(tags)
	g.resort()
	g.mu.Unlock()
	if err := g.ml.UpdateNode(5 * time.Second); err != nil {
		g.log.Warn("cluster: spreading compute-member tags", "error", err)
	}
}

// Publish sends the message to every live node, this one included, each
// over memberlist's reliable (TCP, encrypted) channel. It does not wait
// for the peers: a node that died but is not yet declared dead would hold
// the caller (an API request) for a TCP timeout. A peer that cannot be
// reached is logged, and its consumers' safety nets cover the loss.
func (g *Gossip) Publish(topic string, payload []byte) error {
	msg, err := frame(topic, payload)
	if err != nil {
		return err
	}
	g.subs.deliver(topic, slices.Clone(payload))
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.left {
		return nil
	}
	for _, n := range g.ml.Members() {
		if n.Name == g.cfg.NodeID {
			continue
		}
		g.sends.Add(1)
		go func(n *memberlist.Node) {
			defer g.sends.Done()
			if err := g.ml.SendReliable(n, msg); err != nil {
				g.log.Warn("cluster bus: send failed", "topic", topic, "node", n.Name, "error", err)
			}
		}(n)
	}
	return nil
}

func (g *Gossip) Subscribe(topic string, fn func(payload []byte)) (cancel func()) {
	return g.subs.Subscribe(topic, fn)
}

// SendTo delivers the message to node id alone.
func (g *Gossip) SendTo(id, topic string, payload []byte) error {
	if id == g.cfg.NodeID {
		if _, err := frame(topic, payload); err != nil {
			return err
		}
		g.subs.deliver(topic, slices.Clone(payload))
		return nil
	}
	msg, err := frame(topic, payload)
	if err != nil {
		return err
	}
	for _, n := range g.ml.Members() {
		if n.Name == id {
			return g.ml.SendReliable(n, msg)
		}
	}
	return ErrUnknownNode
}

// Report is healthy while this node is in the cluster and memberlist's
// own health score (its awareness of failed probes) is low.
func (g *Gossip) Report() (bool, string) {
	g.mu.RLock()
	left := g.left
	g.mu.RUnlock()
	if left {
		return false, "membership: left the cluster"
	}
	live := g.Live()
	ids := make([]string, len(live))
	for i, n := range live {
		ids[i] = n.ID
	}
	score := g.ml.GetHealthScore()
	detail := fmt.Sprintf("membership: %d live (%s), node %s, health score %d", len(live), strings.Join(ids, ","), g.cfg.NodeID, score)
	return score < 8, detail
}

// Close leaves the cluster (so peers drop this node at once instead of
// suspecting it) and stops delivery.
func (g *Gossip) Close() {
	g.mu.Lock()
	already := g.left
	g.left = true
	g.mu.Unlock()
	if already {
		return
	}
	g.rejoin.stop()
	g.sends.Wait()
	if err := g.ml.Leave(2 * time.Second); err != nil {
		g.log.Debug("cluster: leave", "error", err)
	}
	g.shutdown()
}

func (g *Gossip) shutdown() {
	g.rejoin.stop()
	if err := g.ml.Shutdown(); err != nil {
		g.log.Debug("cluster: memberlist shutdown", "error", err)
	}
	g.subs.close()
}

// meta is the node metadata memberlist carries: at most
// memberlist.MetaMaxSize (512) bytes.
func (g *Gossip) meta(limit int) []byte {
	self := g.Self()
	b, err := json.Marshal(wireNode(self))
	if err == nil && len(b) <= limit {
		return b
	}
	// Too many tags to advertise: keep as many tenants (in name order)
	// as fit, and say so; dispatch to the dropped tenants' members waits
	// for a member connected elsewhere.
	tenants := make([]string, 0, len(self.Tags))
	for t := range self.Tags {
		tenants = append(tenants, t)
	}
	sort.Strings(tenants)
	for len(tenants) > 0 {
		tenants = tenants[:len(tenants)-1]
		cut := self
		cut.Tags = map[string][]string{}
		for _, t := range tenants {
			cut.Tags[t] = self.Tags[t]
		}
		if b, err = json.Marshal(wireNode(cut)); err == nil && len(b) <= limit {
			break
		}
	}
	g.log.Warn("cluster: compute-member tags exceed the 512-byte gossip metadata; some tenants' tags are not advertised",
		"advertised_tenants", len(tenants), "tenants", len(self.Tags))
	if len(b) > limit {
		b, _ = json.Marshal(wireNode(Node{ID: self.ID, HTTPAddr: self.HTTPAddr, GRPCAddr: self.GRPCAddr}))
	}
	if len(b) > limit {
		return nil
	}
	return b
}

// wireMeta is the metadata's JSON (docs/decisions/0026-cluster.md): addr is
// SVC_NODE_ADDR, grpcAddr omitted when empty.
type wireMeta struct {
	ID       string              `json:"id"`
	Addr     string              `json:"addr"`
	GRPCAddr string              `json:"grpcAddr,omitempty"`
	Tags     map[string][]string `json:"tags,omitempty"`
}

func wireNode(n Node) wireMeta {
	return wireMeta{ID: n.ID, Addr: n.HTTPAddr, GRPCAddr: n.GRPCAddr, Tags: n.Tags}
}

func (g *Gossip) noteNode(n *memberlist.Node) {
	var w wireMeta
	if err := json.Unmarshal(n.Meta, &w); err != nil {
		g.log.Warn("cluster: unreadable node metadata", "node", n.Name, "error", err)
	}
	node := Node{ID: n.Name, HTTPAddr: w.Addr, GRPCAddr: w.GRPCAddr, Tags: w.Tags}
	g.mu.Lock()
	g.live[n.Name] = node
	g.resort()
	g.mu.Unlock()
}

type delegate struct{ g *Gossip }

func (d delegate) NodeMeta(limit int) []byte { return d.g.meta(limit) }

// NotifyMsg receives a user message; b is reused after the return.
func (d delegate) NotifyMsg(b []byte) {
	topic, payload, ok := unframe(b)
	if !ok {
		d.g.log.Warn("cluster bus: malformed message dropped", "bytes", len(b))
		return
	}
	d.g.subs.deliver(topic, slices.Clone(payload))
}

func (delegate) GetBroadcasts(int, int) [][]byte { return nil }
func (delegate) LocalState(bool) []byte          { return nil }
func (delegate) MergeRemoteState([]byte, bool)   {}

type events struct{ g *Gossip }

func (e events) NotifyJoin(n *memberlist.Node)   { e.g.noteNode(n) }
func (e events) NotifyUpdate(n *memberlist.Node) { e.g.noteNode(n) }
func (e events) NotifyLeave(n *memberlist.Node) {
	e.g.mu.Lock()
	delete(e.g.live, n.Name)
	e.g.resort()
	e.g.mu.Unlock()
	e.g.log.Info("cluster: node left", "node", n.Name)
}

// slogWriter routes memberlist's log lines to slog at DEBUG.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		w.log.Debug("memberlist: " + sc.Text())
	}
	return len(p), nil
}

var _ io.Writer = slogWriter{}
