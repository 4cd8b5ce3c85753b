package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"svc/storage"
)

// Webhooks returns the webhook delivery-state store.
func (db *DB) Webhooks() *Webhooks { return &Webhooks{db} }

// Webhooks is the SQLite storage.Webhooks.
type Webhooks struct{ db *DB }

var _ storage.Webhooks = (*Webhooks)(nil)

func (s *Webhooks) write(ctx context.Context, notFound bool, query string, args ...any) (int64, error) {
	var n int64
	err := s.db.w.write(ctx, func(w *wtx) error {
		res, err := w.exec(query, args...)
		if err != nil {
			return fmt.Errorf("sqlite: writing webhook state: %w", err)
		}
		n, _ = res.RowsAffected()
		if notFound && n == 0 {
			return storage.ErrNotFound
		}
		return nil
	})
	return n, err
}

func (s *Webhooks) CreateWebhook(ctx context.Context, w *storage.Webhook) error {
	n, err := s.write(ctx, false, `INSERT INTO subscription_webhooks (tenant, id, secret, failures, failing, last_error, last_attempt_ns, next_attempt_ns)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, w.Tenant, w.ID, w.Secret, w.ConsecutiveFailures, w.Failing, w.LastError,
		ns(w.LastAttemptAt), ns(w.NextAttemptAt))
	if err == nil && n == 0 {
		return storage.ErrExists
	}
	return err
}

func (s *Webhooks) GetWebhook(ctx context.Context, tenant, id string) (*storage.Webhook, error) {
	w := storage.Webhook{Tenant: tenant, ID: id}
	var last, next int64
	err := s.db.queryRow(ctx, `SELECT secret, failures, failing, last_error, last_attempt_ns, next_attempt_ns
		FROM subscription_webhooks WHERE tenant = ? AND id = ?`, tenant, id).
		Scan(&w.Secret, &w.ConsecutiveFailures, &w.Failing, &w.LastError, &last, &next)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading webhook state: %w", err)
	}
	w.LastAttemptAt, w.NextAttemptAt = fromNS(last), fromNS(next)
	return &w, nil
}

func (s *Webhooks) RecordWebhook(ctx context.Context, w *storage.Webhook) error {
	_, err := s.write(ctx, true, `UPDATE subscription_webhooks SET failures = ?, failing = ?, last_error = ?, last_attempt_ns = ?, next_attempt_ns = ?
		WHERE tenant = ? AND id = ?`, w.ConsecutiveFailures, w.Failing, w.LastError, ns(w.LastAttemptAt), ns(w.NextAttemptAt), w.Tenant, w.ID)
	return err
}

func (s *Webhooks) DeleteWebhook(ctx context.Context, tenant, id string) error {
	_, err := s.write(ctx, false, `DELETE FROM subscription_webhooks WHERE tenant = ? AND id = ?`, tenant, id)
	return err
}

func (s *Webhooks) ClaimWebhook(ctx context.Context, tenant, id, owner string, now, until time.Time) (bool, error) {
	n, err := s.write(ctx, false, `UPDATE subscription_webhooks SET lease_owner = ?1, lease_until_ns = ?2
		WHERE tenant = ?3 AND id = ?4 AND (lease_owner = '' OR lease_owner = ?1 OR lease_until_ns <= ?5)`,
		owner, until.UnixNano(), tenant, id, now.UnixNano())
	if err != nil || n == 1 {
		return n == 1, err
	}
	if _, err := s.GetWebhook(ctx, tenant, id); err != nil {
		return false, err
	}
	return false, nil
}

func (s *Webhooks) ReleaseWebhook(ctx context.Context, tenant, id, owner string) error {
	_, err := s.write(ctx, false, `UPDATE subscription_webhooks SET lease_owner = '', lease_until_ns = 0
		WHERE tenant = ? AND id = ? AND lease_owner = ?`, tenant, id, owner)
	return err
}
