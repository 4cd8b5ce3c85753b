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
		// IPv6 forms that carry an IPv4 address.
		"http://[::127.0.0.1]/", "http://[2002:7f00:1::]/", "http://[::ffff:0:127.0.0.1]/",
		"http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "http://[64:ff9b::7f00:1]/",
		"http://[64:ff9b:1::a9fe:a9fe]/", "http://[64:ff9b::808:808]/",
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
		mustBlock := Blocked(bare) || ip.Zone() != "" || carriesBlockedV4(bare)
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

// carriesBlockedV4 is the fuzz targets' own reading of the IPv6 forms that
// carry an IPv4 address, written apart from embeddedV4 so a slip in one is
// caught by the other.
func carriesBlockedV4(ip netip.Addr) bool {
	if !ip.Is6() {
		return false
	}
	b := ip.As16()
	zero := func(from, to int) bool {
		for _, x := range b[from:to] {
			if x != 0 {
				return false
			}
		}
		return true
	}
	at := func(i ...int) bool {
		return Blocked(netip.AddrFrom4([4]byte{b[i[0]], b[i[1]], b[i[2]], b[i[3]]}))
	}
	switch {
	case zero(0, 12): // ::a.b.c.d
		return at(12, 13, 14, 15)
	case zero(0, 8) && b[8] == 0xff && b[9] == 0xff && zero(10, 12): // ::ffff:0:a.b.c.d
		return at(12, 13, 14, 15)
	case b[0] == 0x20 && b[1] == 0x02: // 6to4
		return at(2, 3, 4, 5)
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0: // Teredo
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return at(4, 5, 6, 7) || Blocked(client)
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(4, 12): // 64:ff9b::/96
		return at(12, 13, 14, 15)
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1: // 64:ff9b:1::/48
		return at(6, 7, 9, 10) || at(7, 9, 10, 11) || at(9, 10, 11, 12) || at(12, 13, 14, 15)
	}
	return false
}

// FuzzEmbeddedIPv4 wraps a fuzzed IPv4 address in every IPv6 form that
// carries one: each form is refused at registration and at dial time
// exactly when the IPv4 address is (Teredo and local-use NAT64 also when
// their other reading is).
func FuzzEmbeddedIPv4(f *testing.F) {
	for _, s := range [][]byte{{127, 0, 0, 1}, {10, 0, 0, 1}, {169, 254, 169, 254}, {8, 8, 8, 8}, {0, 0, 0, 0}, {100, 64, 0, 1}} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	ctrl := control(false)
	public := [4]byte{8, 8, 8, 8}
	f.Fuzz(func(t *testing.T, a, b, c, d byte) {
		v4 := netip.AddrFrom4([4]byte{a, b, c, d})
		want := Blocked(v4)
		forms := map[string][16]byte{
			"compatible": {12: a, 13: b, 14: c, 15: d},
			"mapped":     {10: 0xff, 11: 0xff, 12: a, 13: b, 14: c, 15: d},
			"translated": {8: 0xff, 9: 0xff, 12: a, 13: b, 14: c, 15: d},
			"6to4":       {0: 0x20, 1: 0x02, 2: a, 3: b, 4: c, 5: d, 15: 1},
			// Teredo with a public server and the fuzzed client, then the
			// fuzzed server and a public client.
			"teredo client": {0: 0x20, 1: 0x01, 4: public[0], 5: public[1], 6: public[2], 7: public[3], 12: ^a, 13: ^b, 14: ^c, 15: ^d},
			"teredo server": {0: 0x20, 1: 0x01, 4: a, 5: b, 6: c, 7: d, 12: ^public[0], 13: ^public[1], 14: ^public[2], 15: ^public[3]},
			"nat64":         {1: 0x64, 2: 0xff, 3: 0x9b, 12: a, 13: b, 14: c, 15: d},
		}
		for name, raw := range forms {
			ip := netip.AddrFrom16(raw)
			got := Blocked(ip)
			if got != want {
				t.Fatalf("%s %s carrying %s: blocked %v, want %v", name, ip, v4, got, want)
			}
			regErr := CheckHost(context.Background(), Options{}, ip.String())
			dialErr := ctrl("tcp", netip.AddrPortFrom(ip, 443).String(), nil)
			if want != errors.Is(regErr, ErrBlocked) || want != errors.Is(dialErr, ErrBlocked) {
				t.Fatalf("%s %s carrying %s: registration %v, dial %v, want blocked %v", name, ip, v4, regErr, dialErr, want)
			}
		}
		// The local-use NAT64 prefix at each RFC 6052 length: a blocked
		// IPv4 address is refused whichever length the operator chose.
		if want {
			for _, raw := range [][16]byte{
				{1: 0x64, 2: 0xff, 3: 0x9b, 5: 1, 6: a, 7: b, 9: c, 10: d},
				{1: 0x64, 2: 0xff, 3: 0x9b, 5: 1, 7: a, 9: b, 10: c, 11: d},
				{1: 0x64, 2: 0xff, 3: 0x9b, 5: 1, 9: a, 10: b, 11: c, 12: d},
				{1: 0x64, 2: 0xff, 3: 0x9b, 5: 1, 12: a, 13: b, 14: c, 15: d},
			} {
				if ip := netip.AddrFrom16(raw); !Blocked(ip) {
					t.Fatalf("local-use NAT64 %s carrying %s: allowed", ip, v4)
				}
			}
		}
	})
}
