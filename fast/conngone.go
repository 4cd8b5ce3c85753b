//go:build linux || darwin

package fast

import (
	"errors"
	"net"
	"syscall"

	"github.com/valyala/fasthttp"
)

// clientGone returns a check telling whether the client of ctx has closed
// its connection, for work long enough to be worth stopping (see
// entity.WithClientGone), or nil when the connection cannot tell.
//
// fasthttp reads nothing while a handler runs and keeps no per-request
// cancellation (ctx.Done is the server's shutdown), so the check looks at
// the socket itself: a peek that neither blocks nor consumes. End of
// stream or a reset means the client is gone, as net/http's background
// read decides; pending bytes (a pipelined request, a TLS alert) or
// nothing to read mean it may still be there.
func clientGone(ctx *fasthttp.RequestCtx) func() bool {
	c := ctx.Conn()
	for {
		u, ok := c.(interface{ NetConn() net.Conn }) // *tls.Conn
		if !ok {
			break
		}
		c = u.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return func() bool {
		gone := false
		var b [1]byte
		err := rc.Read(func(fd uintptr) bool {
			n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			switch {
			case err == nil:
				gone = n == 0
			case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
			default:
				gone = true
			}
			return true // never wait for readiness
		})
		return gone || err != nil
	}
}
