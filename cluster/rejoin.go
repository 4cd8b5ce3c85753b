package cluster

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"
)

// isSelf reports whether seed (host:port) is this node's gossip address
// bind (SVC_GOSSIP_ADDR): the same string, or the same port on an address
// that is the bind address or, with an unspecified bind host, any address
// of this machine. A host that does not resolve within a second is not
// this node.
func isSelf(ctx context.Context, seed, bind string) bool {
	if seed == bind {
		return true
	}
	host, port, err := net.SplitHostPort(seed)
	bhost, bport, berr := net.SplitHostPort(bind)
	if err != nil || berr != nil || !samePort(port, bport) {
		return false
	}
	lctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(lctx, host)
	if err != nil {
		return false
	}
	bip := net.ParseIP(bhost)
	if bhost != "" && bip == nil {
		// A host name bind: compare what both names resolve to.
		baddrs, err := net.DefaultResolver.LookupIPAddr(lctx, bhost)
		if err != nil {
			return false
		}
		for _, a := range addrs {
			for _, b := range baddrs {
				if a.IP.Equal(b.IP) {
					return true
				}
			}
		}
		return false
	}
	if bip != nil && !bip.IsUnspecified() {
		for _, a := range addrs {
			if a.IP.Equal(bip) {
				return true
			}
		}
		return false
	}
	local, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if a.IP.IsLoopback() {
			return true
		}
		for _, l := range local {
			if ipn, ok := l.(*net.IPNet); ok && ipn.IP.Equal(a.IP) {
				return true
			}
		}
	}
	return false
}

func samePort(a, b string) bool {
	pa, errA := strconv.Atoi(a)
	pb, errB := strconv.Atoi(b)
	return errA == nil && errB == nil && pa == pb
}

// rejoinLoop is the background join of a node that founded the cluster
// alone: it retries the other seeds (backoff 500 ms to 10 s) until one of
// them is a member, so two nodes that each started alone merge. It is
// owned by the Gossip and stopped by Close.
type rejoinLoop struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *rejoinLoop) start(g *Gossip, seeds []string) {
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	r.cancel, r.done = cancel, make(chan struct{})
	done := r.done
	r.mu.Unlock()
	go func() {
		defer close(done)
		backoff := 500 * time.Millisecond
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			if g.seedIsMember(ctx, seeds) {
				g.log.Info("the cluster's other seeds are members now", "node", g.cfg.NodeID, "members", g.ml.NumMembers())
				return
			}
			if n, err := g.ml.Join(seeds); err == nil && n > 0 {
				g.log.Info("joined the cluster's other seeds", "node", g.cfg.NodeID, "contacted", n, "members", g.ml.NumMembers())
				return
			}
			backoff = min(backoff*2, 10*time.Second)
		}
	}()
}

// stop ends the loop and waits for it; safe when it never started.
func (r *rejoinLoop) stop() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// seedIsMember reports whether a member other than this node has the
// address of one of seeds (another node that started later joined this
// one through its seed list).
func (g *Gossip) seedIsMember(ctx context.Context, seeds []string) bool {
	for _, m := range g.ml.Members() {
		if m.Name == g.cfg.NodeID {
			continue
		}
		addr := net.JoinHostPort(m.Addr.String(), strconv.Itoa(int(m.Port)))
		for _, s := range seeds {
			if s == addr || isSelf(ctx, s, addr) {
				return true
			}
		}
	}
	return false
}
