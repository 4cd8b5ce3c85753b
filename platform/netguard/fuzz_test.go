package netguard

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"testing"
)

// FuzzURLHostGuard feeds URLs as an operator would register them: when the
// host is an IP literal in any spelling (zoned, IPv4-mapped, both), the
// registration check and the dial-time check must agree, and both must
// refuse an address whose bare form is in a blocked range.
func FuzzURLHostGuard(f *testing.F) {
	for _, s := range []string{
		"http://[::1%25lo]:8080/.well-known/openid-configuration",
		"http://[::1%25eth0]/", "http://[::1%251]/", "http://[fe80::1%25eth0]/",
		"http://[fd00::1%25lo]/", "http://[::ffff:127.0.0.1%25lo]/", "http://[::ffff:10.0.0.1]/",
		"https://127.0.0.1/", "https://[2606:4700:4700::1111]/", "https://8.8.8.8/",
	} {
		f.Add(s)
	}
	ctrl := control(false)
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		ip, err := netip.ParseAddr(u.Hostname())
		if err != nil {
			return // names go through the resolver; not this target
		}
		bare := ip.WithZone("").Unmap()
		mustBlock := Blocked(bare) || ip.Zone() != ""
		regErr := CheckHost(context.Background(), Options{}, u.Hostname())
		dialErr := ctrl("tcp", netip.AddrPortFrom(ip, 443).String(), nil)
		if mustBlock && (!errors.Is(regErr, ErrBlocked) || !errors.Is(dialErr, ErrBlocked)) {
			t.Fatalf("%q (%s): registration %v, dial %v; want both blocked", raw, ip, regErr, dialErr)
		}
		if (regErr == nil) != (dialErr == nil) {
			t.Fatalf("%q (%s): registration %v, dial %v disagree", raw, ip, regErr, dialErr)
		}
	})
}
