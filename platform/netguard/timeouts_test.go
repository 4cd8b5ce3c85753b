package netguard

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"svc/platform/netguard/netguardtest"
)

// TestFetchTimeoutsNameTheirStage: each of the three timeouts ends the
// fetch it bounds with its own error class, while the other two are far
// longer, and never before its own duration. No upper bound on time: a
// loaded machine may be late, never early.
func TestFetchTimeoutsNameTheirStage(t *testing.T) {
	const short, long = 200 * time.Millisecond, 2 * time.Minute
	get := func(t *testing.T, c *http.Client, url string) (error, time.Duration) {
		t.Helper()
		start := time.Now()
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: fetched (status %d), want a timeout", url, resp.StatusCode)
		}
		return err, time.Since(start)
	}
	t.Run("connect", func(t *testing.T) {
		addr := netguardtest.StalledConnect(t)
		err, took := get(t, NewClient(Options{AllowPrivate: true, ConnectTimeout: short, PoolTimeout: long, ReadTimeout: long}), "http://"+addr+"/")
		if !errors.Is(err, ErrConnectTimeout) || errors.Is(err, ErrReadTimeout) || took < short {
			t.Fatalf("after %v: %v, want ErrConnectTimeout after at least %v", took, err, short)
		}
	})
	t.Run("read", func(t *testing.T) {
		s := netguardtest.NewSilent(t)
		err, took := get(t, NewClient(Options{AllowPrivate: true, ConnectTimeout: long, PoolTimeout: long, ReadTimeout: short}), s.URL)
		if !errors.Is(err, ErrReadTimeout) || errors.Is(err, ErrConnectTimeout) || took < short {
			t.Fatalf("after %v: %v, want ErrReadTimeout after at least %v", took, err, short)
		}
	})
	t.Run("pool", func(t *testing.T) {
		first := make(chan error, 1)
		// Registered before the server, so it runs after the server's
		// cleanup has answered the held fetch.
		t.Cleanup(func() { <-first })
		s := netguardtest.NewSilent(t)
		c := NewClient(Options{AllowPrivate: true, ConnectTimeout: long, PoolTimeout: short, ReadTimeout: long, MaxConns: 1})
		go func() {
			resp, err := c.Get(s.URL)
			if err == nil {
				resp.Body.Close()
			}
			first <- err
		}()
		<-s.Arrived // the only slot is now held by a fetch that gets no answer
		err, took := get(t, c, s.URL)
		if !errors.Is(err, ErrPoolTimeout) || took < short {
			t.Fatalf("after %v: %v, want ErrPoolTimeout after at least %v", took, err, short)
		}
	})
}
