package postgres

import (
	"context"
	"time"

	"svc/storage"
)

// Webhooks returns the webhook delivery-state store.
func (db *DB) Webhooks() *Webhooks { return &Webhooks{subs: &Subscriptions{db: db}} }

// Webhooks is the PostgreSQL storage.Webhooks.
type Webhooks struct{ subs *Subscriptions }

var _ storage.Webhooks = (*Webhooks)(nil)

func (s *Webhooks) CreateWebhook(ctx context.Context, w *storage.Webhook) error {
	n, err := s.subs.exec(ctx, "create webhook", `INSERT INTO subscription_webhooks
		(tenant, id, secret, failures, failing, last_error, last_attempt_ns, next_attempt_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT DO NOTHING`, w.Tenant, w.ID, w.Secret, w.ConsecutiveFailures, w.Failing, w.LastError, nsOf(w.LastAttemptAt), nsOf(w.NextAttemptAt))
	if err == nil && n == 0 {
		return storage.ErrExists
	}
	return err
}

func (s *Webhooks) GetWebhook(ctx context.Context, tenant, id string) (*storage.Webhook, error) {
	c, err := s.subs.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	w := storage.Webhook{Tenant: tenant, ID: id}
	var last, next int64
	err = c.QueryRow(ctx, `SELECT secret, failures, failing, last_error, last_attempt_ns, next_attempt_ns
		FROM subscription_webhooks WHERE tenant = $1 AND id = $2`, tenant, id).
		Scan(&w.Secret, &w.ConsecutiveFailures, &w.Failing, &w.LastError, &last, &next)
	if err != nil {
		return nil, notFoundOr(err, "read webhook state")
	}
	w.LastAttemptAt, w.NextAttemptAt = unixNano(last), unixNano(next)
	return &w, nil
}

func (s *Webhooks) RecordWebhook(ctx context.Context, w *storage.Webhook) error {
	return notFoundIfNone(s.subs.exec(ctx, "record webhook state", `UPDATE subscription_webhooks SET failures = $3, failing = $4,
		last_error = $5, last_attempt_ns = $6, next_attempt_ns = $7 WHERE tenant = $1 AND id = $2`,
		w.Tenant, w.ID, w.ConsecutiveFailures, w.Failing, w.LastError, nsOf(w.LastAttemptAt), nsOf(w.NextAttemptAt)))
}

func (s *Webhooks) DeleteWebhook(ctx context.Context, tenant, id string) error {
	_, err := s.subs.exec(ctx, "delete webhook", `DELETE FROM subscription_webhooks WHERE tenant = $1 AND id = $2`, tenant, id)
	return err
}

func (s *Webhooks) ClaimWebhook(ctx context.Context, tenant, id, owner string, now, until time.Time) (bool, error) {
	n, err := s.subs.exec(ctx, "claim webhook", `UPDATE subscription_webhooks SET lease_owner = $3, lease_until_ns = $4
		WHERE tenant = $1 AND id = $2 AND (lease_owner = '' OR lease_owner = $3 OR lease_until_ns <= $5)`,
		tenant, id, owner, until.UnixNano(), now.UnixNano())
	if err != nil || n == 1 {
		return n == 1, err
	}
	if _, err := s.GetWebhook(ctx, tenant, id); err != nil {
		return false, err
	}
	return false, nil
}

func (s *Webhooks) ReleaseWebhook(ctx context.Context, tenant, id, owner string) error {
	_, err := s.subs.exec(ctx, "release webhook", `UPDATE subscription_webhooks SET lease_owner = '', lease_until_ns = 0
		WHERE tenant = $1 AND id = $2 AND lease_owner = $3`, tenant, id, owner)
	return err
}
