package storagetest

import (
	"testing"
	"time"

	"svc/storage"
)

// RevokedTokens is the contract of storage.RevokedTokens: records list
// until they lapse, a second revocation never shortens the first, and
// purging removes only lapsed records.
func RevokedTokens(t *testing.T, newStore func(t *testing.T) storage.RevokedTokens) {
	s := newStore(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	rec := func(jti string, until time.Duration) *storage.RevokedToken {
		return &storage.RevokedToken{JTI: jti, Tenant: "A", ClientID: "C1", Until: now.Add(until), RevokedAt: now}
	}
	for _, r := range []*storage.RevokedToken{rec("live", time.Hour), rec("lapsed", -time.Minute), rec("soon", time.Minute)} {
		if err := s.RevokeToken(bg, r); err != nil {
			t.Fatal(err)
		}
	}
	// Revoking again with an earlier until keeps the later one; a later
	// until extends.
	if err := s.RevokeToken(bg, rec("live", time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(bg, rec("soon", 2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	l, err := s.ListRevokedTokens(bg, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 2 || l[0].JTI != "live" || l[1].JTI != "soon" {
		t.Fatalf("listed %+v, want live and soon", l)
	}
	if !l[0].Until.Equal(now.Add(time.Hour)) || !l[1].Until.Equal(now.Add(2*time.Hour)) ||
		l[0].Tenant != "A" || l[0].ClientID != "C1" || !l[0].RevokedAt.Equal(now) {
		t.Fatalf("records %+v %+v", l[0], l[1])
	}
	if l, _ := s.ListRevokedTokens(bg, now.Add(90*time.Minute)); len(l) != 1 || l[0].JTI != "soon" {
		t.Fatalf("listed later: %+v", l)
	}
	n, err := s.PurgeRevokedTokens(bg, now)
	if err != nil || n != 1 {
		t.Fatalf("purge: %d %v, want the lapsed record only", n, err)
	}
	if l, _ := s.ListRevokedTokens(bg, now.Add(-time.Hour)); len(l) != 2 {
		t.Fatalf("after purge: %+v", l)
	}
}
