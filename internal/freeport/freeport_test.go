package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPickIsFreeDistinctAndBelowTheEphemeralRange(t *testing.T) {
	t.Parallel()
	lo := ephemeralLow()
	seen := map[int]bool{}
	for range 50 {
		p := Pick(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		if lo > minPort+1000 && (p < minPort || p >= lo) {
			t.Fatalf("port %d outside [%d, %d)", p, minPort, lo)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("picked port %d does not take a listener: %v", p, err)
		}
		ln.Close()
	}
}
