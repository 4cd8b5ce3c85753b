package changefeed

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWebhookSignature: the signature is the Standard Webhooks one,
// computed here independently: base64 HMAC-SHA256 keyed by the bytes
// behind "whsec_" over "{id}.{timestamp}.{body}", written "v1,<base64>";
// a reused signer gives the same answer as a fresh one.
func TestWebhookSignature(t *testing.T) {
	secret := NewWebhookSecret()
	raw, ok := strings.CutPrefix(secret, "whsec_")
	key, err := base64.StdEncoding.DecodeString(raw)
	if !ok || err != nil || len(key) != 32 {
		t.Fatalf("secret %q: want whsec_ and 32 base64 bytes", secret)
	}
	if NewWebhookSecret() == secret {
		t.Fatal("two secrets alike")
	}
	k, err := webhookKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	s := newSigner(k)
	for _, c := range []struct {
		id   string
		ts   int64
		body string
	}{{"msg_1", 1700000000, `{"a":1}`}, {"msg_2", 1700000001, ""}, {"msg_1", 1700000000, `{"a":1}`}} {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(c.id + "." + strconv.FormatInt(c.ts, 10) + "." + c.body))
		want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
		if got := s.sign(c.id, c.ts, []byte(c.body)); got != want {
			t.Fatalf("sign(%q, %d, %q) = %s, want %s", c.id, c.ts, c.body, got, want)
		}
	}
	if _, err := webhookKey("AAAA"); err == nil {
		t.Fatal("a secret without whsec_ was taken")
	}
}

// TestRetryAfter: delay seconds and the HTTP-date forms, relative to the
// clock; anything else is no Retry-After; a wait from one is at least the
// backoff minimum and at most an hour.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"7", 7 * time.Second, true}, {" 120 ", 2 * time.Minute, true}, {"0", 0, true},
		{"Fri, 27 Nov 2026 01:00:30 GMT", 30 * time.Second, true},
		{"Friday, 27-Nov-26 01:01:00 GMT", time.Minute, true},
		{"Fri Nov 27 01:00:05 2026", 5 * time.Second, true},
		{"Fri, 27 Nov 2026 00:59:00 GMT", 0, true}, // in the past: now
		{"99999999", time.Hour, true},
		{"", 0, false}, {"-3", 0, false}, {"soon", 0, false}, {"1.5", 0, false},
	} {
		got, ok := parseRetryAfter(c.v, now)
		if got != c.want || ok != c.ok {
			t.Errorf("parseRetryAfter(%q) = %s %v, want %s %v", c.v, got, ok, c.want, c.ok)
		}
	}
	o := WebhookOptions{BackoffMin: 2 * time.Second, BackoffMax: time.Minute, Jitter: func() float64 { return 0.5 }}
	o.defaults()
	if w := o.retryWait(1, 0, true); w != 2*time.Second {
		t.Errorf("Retry-After 0: %s, want the minimum", w)
	}
	if w := o.retryWait(1, 3*time.Hour, true); w != time.Hour {
		t.Errorf("Retry-After 3h: %s, want 1h", w)
	}
}

// TestBackoff: doubling from the minimum, capped, jittered into the
// upper half of each step.
func TestBackoff(t *testing.T) {
	for _, j := range []float64{0, 0.999} {
		o := WebhookOptions{BackoffMin: time.Second, BackoffMax: 10 * time.Second, Jitter: func() float64 { return j }}
		o.defaults()
		for n, step := range []time.Duration{1, 2, 4, 8, 10, 10, 10} {
			step *= time.Second
			got := o.backoff(n + 1)
			if got < step/2 || got > step {
				t.Errorf("jitter %v, failure %d: %s, want [%s, %s]", j, n+1, got, step/2, step)
			}
		}
	}
	o := WebhookOptions{}
	o.defaults()
	if d := o.backoff(1000); d > 5*time.Minute || d < 150*time.Second {
		t.Errorf("default cap: %s", d)
	}
	for range 100 {
		if f := cryptoJitter(); f < 0 || f >= 1 {
			t.Fatalf("jitter %v", f)
		}
	}
}

// TestPrintable: a receiver's answer shown as the last error is one line
// of valid UTF-8, bounded.
func TestPrintable(t *testing.T) {
	if got := printable([]byte("a\nb\x00c\xffd  "), 100); got != "a b cd" {
		t.Errorf("%q", got)
	}
	if got := printable([]byte(strings.Repeat("é", 300)), 200); len(got) > 202 {
		t.Errorf("%d bytes", len(got))
	}
}

// BenchmarkWebhookSign signs a batch of 100 events (about 40 KiB): one
// HMAC-SHA256 over the body and the header value.
func BenchmarkWebhookSign(b *testing.B) {
	key, _ := webhookKey(NewWebhookSecret())
	s := newSigner(key)
	body := []byte(`{"type":"entity.changes","data":{"subscriptionId":"x","events":[` +
		strings.Repeat(`{"eventId":"0b5e0c58-8a3e-4d54-9f0c-6a2c1f7e8a11:1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e5f","kind":"UPDATE","bodyAfter":{"total":12.5,"customer":"c-42","lines":[1,2,3]}},`, 99) +
		`{}]}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		_ = s.sign("msg_0123456789abcdef_1-2_3-4", 1700000000, body)
	}
}
