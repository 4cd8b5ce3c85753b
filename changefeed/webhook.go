package changefeed

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"svc/platform/apierr"
	"svc/platform/netguard"
	"svc/storage"
)

// The webhook door (docs/decisions/0037-change-feed-webhooks.md): a
// durable subscription may name an HTTPS receiver; svc POSTs its events
// in batches signed as the Standard Webhooks specification says, and
// retries a receiver that fails with exponential backoff and jitter,
// honouring Retry-After. This file has the subscription side (the
// definition, its checks, the secret, the signature, the state shown on
// the resource); webhook_deliver.go the delivery.

// WebhookSpec is a subscription's receiver. Only URL is written by the
// client; Secret appears once, in the answer to create, and Status on
// every read.
type WebhookSpec struct {
	URL    string         `json:"url"`
	Secret string         `json:"secret,omitempty"`
	Status *WebhookStatus `json:"status,omitempty"`
}

// WebhookStatus is the delivery state the resource shows.
type WebhookStatus struct {
	// Failing is set once ConsecutiveFailures reaches the configured
	// bound; delivery keeps retrying at the backoff cap until the
	// receiver answers again (which clears it).
	Failing             bool       `json:"failing"`
	ConsecutiveFailures int        `json:"consecutiveFailures"`
	LastError           string     `json:"lastError,omitempty"`
	LastAttemptAt       *time.Time `json:"lastAttemptAt,omitempty"`
	NextAttemptAt       *time.Time `json:"nextAttemptAt,omitempty"`
}

// WebhookOptions are the webhook door's settings (SVC_WEBHOOK_*).
type WebhookOptions struct {
	// Store keeps secrets and delivery state; nil refuses subscriptions
	// that name a webhook.
	Store storage.Webhooks
	// Net is the SSRF guard of the create-time check and of the delivery
	// client: AllowPrivate (SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS, test and
	// development only) also lets plain http reach a loopback receiver;
	// tests set RootCAs and Resolver.
	Net netguard.Options
	// Timeout bounds one delivery request (connect, TLS, answer); 0 is 10s.
	Timeout time.Duration
	// MaxEvents bounds the events of one request (a subscription's
	// batching.maxEvents may lower it); 0 is 100. MaxBytes bounds the
	// encoded events of one request (a single larger event goes alone);
	// 0 is 1 MiB.
	MaxEvents int
	MaxBytes  int
	// BackoffMin is the first retry's delay, doubling per consecutive
	// failure up to BackoffMax (each jittered down by up to half); 0 is
	// 1s and 5m.
	BackoffMin, BackoffMax time.Duration
	// FailingAfter is the consecutive failures after which the
	// subscription shows failing; 0 is 10.
	FailingAfter int
	// Lease is how long a node holds a subscription's delivery without
	// renewing it (renewed every third of it); 0 is 30s, and never less
	// than three Timeouts.
	Lease time.Duration
	// Rescan is how often the deliverer rereads the subscriptions (a
	// change here rescans at once); 0 is 10s.
	Rescan time.Duration
	// Node names this node's leases; "" is a random id.
	Node string
	// After is the retry wait (tests record and shorten it); nil is
	// time.After. Jitter returns a number in [0, 1); nil is crypto/rand.
	After  func(time.Duration) <-chan time.Time
	Jitter func() float64
}

// retryAfterCeiling bounds how long a Retry-After answer parks delivery.
const retryAfterCeiling = time.Hour

func (o *WebhookOptions) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 100
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 1 << 20
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = time.Second
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 5 * time.Minute
	}
	o.BackoffMax = max(o.BackoffMax, o.BackoffMin)
	if o.FailingAfter <= 0 {
		o.FailingAfter = 10
	}
	if o.Lease <= 0 {
		o.Lease = 30 * time.Second
	}
	o.Lease = max(o.Lease, 3*o.Timeout)
	if o.Rescan <= 0 {
		o.Rescan = 10 * time.Second
	}
	if o.Node == "" {
		o.Node = newID()
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Jitter == nil {
		o.Jitter = cryptoJitter
	}
	// The delivery client: the guarded dialer, no proxy, no redirects;
	// receivers on TLS 1.2 are common.
	if o.Net.MinTLS == 0 {
		o.Net.MinTLS = 0x0303 // tls.VersionTLS12
	}
	o.Net.ConnectTimeout, o.Net.PoolTimeout, o.Net.ReadTimeout = o.Timeout, o.Timeout, o.Timeout
}

func cryptoJitter() float64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var n uint64
	for _, x := range b {
		n = n<<8 | uint64(x)
	}
	return float64(n>>11) / (1 << 53)
}

// backoff is the wait after the n-th consecutive failure (n >= 1):
// BackoffMin doubled per failure, capped at BackoffMax, then jittered
// into its upper half so retries of many subscriptions spread out.
func (o *WebhookOptions) backoff(n int) time.Duration {
	d := o.BackoffMin
	for i := 1; i < n && d < o.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, o.BackoffMax)
	return d/2 + time.Duration(o.Jitter()*float64(d/2))
}

// retryWait is the wait before the next attempt: the receiver's
// Retry-After when it sent one (at least BackoffMin, at most an hour),
// the backoff otherwise.
func (o *WebhookOptions) retryWait(n int, retryAfter time.Duration, has bool) time.Duration {
	if has {
		return min(max(retryAfter, o.BackoffMin), retryAfterCeiling)
	}
	return o.backoff(n)
}

// parseRetryAfter reads a Retry-After value: delay seconds or an
// HTTP-date (RFC 9110 10.2.3), relative to now.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(retryAfterCeiling/time.Second) {
			return retryAfterCeiling, true
		}
		return time.Duration(n) * time.Second, true
	}
	for _, layout := range []string{time.RFC1123, time.RFC850, time.ANSIC} {
		if t, err := time.Parse(layout, v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	return 0, false
}

// NewWebhookSecret returns a fresh signing secret: "whsec_" and the
// base64 of 32 random bytes, as the Standard Webhooks specification
// writes them.
func NewWebhookSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:])
}

// webhookKey is the HMAC key a secret stands for: the bytes behind the
// "whsec_" prefix.
func webhookKey(secret string) ([]byte, error) {
	raw, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return nil, errors.New("changefeed: webhook secret without the whsec_ prefix")
	}
	return base64.StdEncoding.DecodeString(raw)
}

// signer computes webhook-signature values with one key, reusing its
// HMAC state (one signer per delivery worker: not safe for concurrent use).
type signer struct {
	mac hash.Hash
	buf []byte
}

func newSigner(key []byte) *signer { return &signer{mac: hmac.New(sha256.New, key)} }

// sign returns the webhook-signature header value of a message:
// "v1," and the base64 HMAC-SHA256 of "{id}.{timestamp}.{body}".
func (s *signer) sign(id string, ts int64, body []byte) string {
	s.mac.Reset()
	s.buf = append(s.buf[:0], id...)
	s.buf = append(s.buf, '.')
	s.buf = strconv.AppendInt(s.buf, ts, 10)
	s.buf = append(s.buf, '.')
	s.mac.Write(s.buf)
	s.mac.Write(body)
	var sum [sha256.Size]byte
	var out [3 + 44]byte
	copy(out[:], "v1,")
	base64.StdEncoding.Encode(out[3:], s.mac.Sum(sum[:0]))
	return string(out[:])
}

// checkWebhook validates a subscription's receiver at create: a durable
// subscription, an https URL without credentials (plain http only to
// loopback when private networks are allowed), and a host the SSRF guard
// lets through (the guard checks again at every dial, so a name that
// later resolves elsewhere is refused then).
func (s *Service) checkWebhook(ctx context.Context, sp *Spec) error {
	w := sp.Webhook
	if w == nil {
		return nil
	}
	if s.opt.Webhook.Store == nil {
		return badField("webhook", "webhook delivery is not available on this node")
	}
	if w.Secret != "" || w.Status != nil {
		return badField("webhook", "only url may be written (svc generates the secret and keeps the status)")
	}
	if sp.Delivery != DeliveryDurable {
		return badField("webhook", "only a DURABLE subscription delivers to a webhook")
	}
	u, err := url.Parse(w.URL)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return badField("webhook.url", "an absolute https URL")
	}
	if u.User != nil {
		return badField("webhook.url", "credentials in the URL are refused; verify the signature instead")
	}
	if u.Fragment != "" {
		return badField("webhook.url", "a fragment is never sent; remove it")
	}
	host := u.Hostname()
	switch u.Scheme {
	case "https":
	case "http":
		if !s.opt.Webhook.Net.AllowPrivate || !isLoopback(host) {
			return badField("webhook.url", "https is required (plain http only reaches loopback with SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS)")
		}
	default:
		return badField("webhook.url", "https is required")
	}
	cctx, cancel := context.WithTimeout(ctx, s.opt.Webhook.Timeout)
	defer cancel()
	if err := netguard.CheckHost(cctx, s.opt.Webhook.Net, host); err != nil {
		if errors.Is(err, netguard.ErrBlocked) {
			return apierr.New(apierr.BadRequest, "webhook.url: the host is in a blocked address range (loopback, private, link-local …)",
				apierr.P("path", "webhook.url"))
		}
		return badField("webhook.url", "the host does not resolve")
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// createWebhook stores the receiver's secret and empty state before the
// subscription itself, so a delivery worker never sees one without the
// other; it returns the secret to show once.
func (s *Service) createWebhook(ctx context.Context, tenant, id string) (string, error) {
	secret := NewWebhookSecret()
	if err := s.opt.Webhook.Store.CreateWebhook(ctx, &storage.Webhook{Tenant: tenant, ID: id, Secret: secret}); err != nil {
		return "", fmt.Errorf("changefeed: storing the webhook secret: %w", err)
	}
	return secret, nil
}

// dropWebhook removes a deleted subscription's delivery state.
func (s *Service) dropWebhook(ctx context.Context, tenant, id string) {
	if s.opt.Webhook.Store == nil {
		return
	}
	if err := s.opt.Webhook.Store.DeleteWebhook(ctx, tenant, id); err != nil {
		s.opt.Log.Warn("changefeed: deleting webhook state", "tenant", tenant, "id", id, "error", err)
	}
}

// webhookStatus fills the resource's delivery state (never the secret).
func (s *Service) webhookStatus(ctx context.Context, rec *storage.Subscription, out *Subscription) error {
	if out.Webhook == nil || s.opt.Webhook.Store == nil {
		return nil
	}
	out.Webhook.Secret = ""
	st, err := s.opt.Webhook.Store.GetWebhook(ctx, rec.Tenant, rec.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("changefeed: reading webhook state: %w", err)
	}
	v := &WebhookStatus{Failing: st.Failing, ConsecutiveFailures: st.ConsecutiveFailures, LastError: st.LastError}
	if !st.LastAttemptAt.IsZero() {
		t := st.LastAttemptAt
		v.LastAttemptAt = &t
	}
	if !st.NextAttemptAt.IsZero() && st.ConsecutiveFailures > 0 {
		t := st.NextAttemptAt
		v.NextAttemptAt = &t
	}
	out.Webhook.Status = v
	return nil
}

// webhookChanged wakes this node's deliverer: a subscription was
// created, changed or deleted here.
func (s *Service) webhookChanged() {
	if k := s.kick.Load(); k != nil {
		(*k)()
	}
}
