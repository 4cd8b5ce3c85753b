package storage

import (
	"context"
	"time"
)

// Webhook is the delivery side of a change-feed subscription that names an
// HTTPS receiver (docs/decisions/0037-change-feed-webhooks.md): the
// signing secret, the delivery state the resource shows, and the lease that
// lets one node at a time deliver it.
type Webhook struct {
	Tenant string
	ID     string
	// Secret signs every request ("whsec_" and base64); it is stored so it
	// can sign and shown to the client only when created.
	Secret string
	// ConsecutiveFailures counts attempts failed since the last success;
	// Failing is set once they reach the configured bound.
	ConsecutiveFailures int
	Failing             bool
	LastError           string
	LastAttemptAt       time.Time
	NextAttemptAt       time.Time
}

// Webhooks stores webhook subscriptions' delivery state, scoped by tenant.
type Webhooks interface {
	// CreateWebhook stores w; ErrExists when the id is taken.
	CreateWebhook(ctx context.Context, w *Webhook) error
	// GetWebhook returns one; ErrNotFound when absent.
	GetWebhook(ctx context.Context, tenant, id string) (*Webhook, error)
	// RecordWebhook replaces the delivery state (every member but Secret);
	// ErrNotFound when absent.
	RecordWebhook(ctx context.Context, w *Webhook) error
	// DeleteWebhook removes one; nil when it is absent already.
	DeleteWebhook(ctx context.Context, tenant, id string) error
	// ClaimWebhook takes or renews the delivery lease for owner until
	// until, when it is free, expired at now or owner's already; it
	// reports whether owner holds it. ErrNotFound when absent.
	ClaimWebhook(ctx context.Context, tenant, id, owner string, now, until time.Time) (bool, error)
	// ReleaseWebhook gives owner's lease up (nothing when another holds it).
	ReleaseWebhook(ctx context.Context, tenant, id, owner string) error
}
