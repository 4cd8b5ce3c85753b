package netguardtest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StalledConnect returns a loopback address whose TCP connects never
// complete: a listener with a backlog of 0 that never accepts, its accept
// queue filled, so the kernel drops further SYNs and a dial waits until its
// own timeout. The queue is filled by dialling until a dial times out (one
// connection on Linux), so the state is observed, not assumed.
func StalledConnect(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return addr
		}
		if err != nil {
			t.Fatalf("filling the accept queue of %s: %v", addr, err)
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Fatalf("connects to %s never stalled", addr)
	return ""
}

// Silent is an HTTP server that reads requests and never answers them.
// Arrived receives one value per request that reached it; every held
// request is released when the test ends.
type Silent struct {
	URL     string
	Arrived chan struct{}
}

// NewSilent starts a Silent server on loopback.
func NewSilent(t testing.TB) *Silent {
	t.Helper()
	s := &Silent{Arrived: make(chan struct{}, 64)}
	release := make(chan struct{})
	// held counts the handlers running. A connection accepted just before
	// srv.Close can reach the handler after it, so an Add could meet the
	// cleanup's Wait (a WaitGroup misuse -race reports); closed, set under
	// mu before Wait, turns such late handlers away instead.
	var held sync.WaitGroup
	var mu sync.Mutex
	closed := false
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if closed {
			mu.Unlock()
			return
		}
		held.Add(1)
		mu.Unlock()
		defer held.Done()
		select {
		case s.Arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), ReadHeaderTimeout: time.Minute}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() {
		close(release)
		srv.Close()
		<-done
		mu.Lock()
		closed = true
		mu.Unlock()
		held.Wait()
	})
	s.URL = "http://" + ln.Addr().String()
	return s
}
