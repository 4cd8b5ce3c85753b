package txtoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func at(sec int64) func() time.Time { return func() time.Time { return time.Unix(sec, 0) } }

// TestRoundTrip: a token verifies with the secret that signed it and
// carries node, transaction and an expiry at least the TTL away; the wire
// form is base64url(JSON) "." base64url(HMAC-SHA256(secret, JSON)).
func TestRoundTrip(t *testing.T) {
	s := New(secret, "node-1", 90*time.Second).WithClock(func() time.Time { return time.Unix(1000, 5e8) })
	tok := s.Sign("tx-1")
	c, err := s.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if c.Node != "node-1" || c.Tx != "tx-1" || c.Exp != 1091 {
		t.Fatalf("claims %+v", c)
	}
	p, sg, _ := strings.Cut(tok, ".")
	js, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != `{"n":"node-1","t":"tx-1","e":1091}` {
		t.Fatalf("payload %s", js)
	}
	h := hmac.New(sha256.New, secret)
	h.Write(js)
	if sg != base64.RawURLEncoding.EncodeToString(h.Sum(nil)) {
		t.Fatal("signature is not HMAC-SHA256 over the claims JSON")
	}
}

// TestEscapedIDs: ids needing JSON escapes still round-trip.
func TestEscapedIDs(t *testing.T) {
	s := New(secret, `n"\`, time.Minute)
	c, err := s.Verify(s.Sign("t\n\u00e9"))
	if err != nil || c.Node != `n"\` || c.Tx != "t\n\u00e9" {
		t.Fatalf("%+v %v", c, err)
	}
}

// TestExpiry: valid strictly before the expiry second, expired from it on.
func TestExpiry(t *testing.T) {
	s := New(secret, "n", 2*time.Second).WithClock(at(100))
	tok := s.Sign("tx")
	if _, err := s.WithClock(at(101)).Verify(tok); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	if _, err := s.WithClock(at(102)).Verify(tok); !errors.Is(err, ErrExpired) {
		t.Fatalf("at expiry: %v", err)
	}
}

// TestRejects: every tampering is a signature or format failure, never
// an accepted token; an expired token with a bad signature is a
// signature failure (signature first).
func TestRejects(t *testing.T) {
	s := New(secret, "n", time.Minute).WithClock(at(100))
	tok := s.Sign("tx")
	p, sg, _ := strings.Cut(tok, ".")
	other := New([]byte("another secret, 32 bytes long..."), "n", time.Minute).WithClock(at(100))
	forged := func(claims string) string {
		return base64.RawURLEncoding.EncodeToString([]byte(claims)) + "." + sg
	}
	cases := map[string]struct {
		tok  string
		want error
	}{
		"other secret":   {other.Sign("tx"), ErrSignature},
		"changed claims": {forged(`{"n":"n","t":"tx2","e":160}`), ErrSignature},
		"empty":          {"", ErrMalformed},
		"no dot":         {p, ErrMalformed},
		"two dots":       {tok + ".x", ErrMalformed},
		"bad base64":     {"!!." + sg, ErrMalformed},
		"short sig":      {p + ".AAAA", ErrMalformed},
		"not json":       {forged("nope"), ErrMalformed},
		"no tx":          {forged(`{"n":"n","e":160}`), ErrMalformed},
		"padded":         {p + "=." + sg, ErrMalformed},
	}
	for name, c := range cases {
		if _, err := s.Verify(c.tok); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	expiredOther := other.WithClock(at(0)).Sign("tx")
	if _, err := s.Verify(expiredOther); !errors.Is(err, ErrSignature) {
		t.Fatalf("expired foreign token: %v", err)
	}
}

// TestRandomSecrets: two processes' signers do not accept each other's
// tokens.
func TestRandomSecrets(t *testing.T) {
	a, err := NewRandom("n", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRandom("n", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Verify(a.Sign("tx")); !errors.Is(err, ErrSignature) {
		t.Fatalf("%v", err)
	}
	if _, err := a.Verify(a.Sign("tx")); err != nil {
		t.Fatal(err)
	}
}

// FuzzParse: no input panics the parser or the verifier, and an accepted
// token's claims re-encode to the payload's meaning.
func FuzzParse(f *testing.F) {
	s := New(secret, "n", time.Minute).WithClock(at(100))
	f.Add(s.Sign("tx"))
	f.Add("")
	f.Add(".")
	f.Add("eyJuIjoibiJ9.AAAA")
	f.Add("e30." + strings.Repeat("A", 43))
	f.Fuzz(func(t *testing.T, tok string) {
		payload, _, c, err := Parse(tok)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("parse error not ErrMalformed: %v", err)
			}
			return
		}
		var again Claims
		if json.Unmarshal(payload, &again) != nil || again != c {
			t.Fatalf("claims %+v do not match payload %q", c, payload)
		}
		// A verified token is exactly the canonical encoding of its claims
		// and their MAC: nothing else verifies.
		if _, err := s.Verify(tok); err == nil || errors.Is(err, ErrExpired) {
			if want := b64.EncodeToString(payload) + "." + b64.EncodeToString(s.mac(payload)); tok != want {
				t.Fatalf("verified a non-canonical token %q", tok)
			}
		}
	})
}

// BenchmarkSignVerify is one dispatch's token: minted for the call, then
// verified by the callback.
func BenchmarkSignVerify(b *testing.B) {
	s := New(secret, "node-1", 90*time.Second)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify(s.Sign("1f0c2a4e-9a7b-11f0-8de9-0242ac120002")); err != nil {
			b.Fatal(err)
		}
	}
}
