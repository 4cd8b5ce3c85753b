// Package freeport picks loopback ports for servers a test must name a
// port to before they start: a child svc process (told SVC_HTTP_PORT and
// the others in its environment) or a gossip node (memberlist binds TCP
// and UDP on the one port it advertises). Where the server can bind :0
// and report its address, tests do that instead.
//
// A pick is a probe (the port takes a TCP and a UDP listener on
// 127.0.0.1, which are closed again), so another process can still take
// the port before the server binds it; the server then fails at startup
// with "address already in use", loudly, never a test talking to the
// wrong server. Picks come from below the kernel's ephemeral range: the
// outgoing connections every process opens (to PostgreSQL, to peers) and
// every listener on :0 take their ports from that range, so a probe of :0
// was soon taken again once tests ran in parallel. Within one test binary
// no port is handed out twice.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// minPort is the lowest port picked: above the well-known and most
// registered service ports.
const minPort = 20000

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Pick returns a loopback port that was free for TCP and UDP a moment ago
// and that this test binary has not handed out before.
func Pick(t testing.TB) int {
	t.Helper()
	port, err := Next()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Next is Pick for a program that is not a test (the load suite starting
// svc processes): a port free a moment ago, not handed out before in this
// process.
func Next() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	if lo := ephemeralLow(); lo > minPort+1000 {
		for range 1000 {
			port := minPort + rand.IntN(lo-minPort)
			if !handedOut.ports[port] && free(port) {
				handedOut.ports[port] = true
				return port, nil
			}
		}
	}
	// No room below the ephemeral range: probe :0.
	for range 1000 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("freeport: probing :0: %w", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		// The kernel may hand a just-closed port out again.
		if !handedOut.ports[port] && free(port) {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("freeport: no free loopback port found")
}

// Addr is Pick as "127.0.0.1:port".
func Addr(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", Pick(t))
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768,
// Linux's default, when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return lo
}

// free reports whether port takes a TCP and a UDP listener on 127.0.0.1,
// closing them again.
func free(port int) bool {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	ln.Close()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	pc.Close()
	return true
}
