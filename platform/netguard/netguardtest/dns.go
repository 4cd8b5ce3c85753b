// Package netguardtest has test helpers for code behind the SSRF guard.
package netguardtest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// FakeDNS answers every A/AAAA query with the addresses in answers, over
// loopback UDP, so a name can resolve to a private address without
// touching /etc/hosts or the network.
func FakeDNS(t testing.TB, answers map[string][]netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.EnableCompression()
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
			for _, ip := range answers[strings.TrimSuffix(q.Name.String(), ".")] {
				switch {
				case q.Type == dnsmessage.TypeA && ip.Is4():
					rh.Type = dnsmessage.TypeA
					b.AResource(rh, dnsmessage.AResource{A: ip.As4()})
				case q.Type == dnsmessage.TypeAAAA && ip.Is6():
					rh.Type = dnsmessage.TypeAAAA
					b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: ip.As16()})
				}
			}
			msg, err := b.Finish()
			if err == nil {
				pc.WriteTo(msg, from)
			}
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}
