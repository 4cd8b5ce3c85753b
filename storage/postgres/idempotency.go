package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// IdempotencyKeys returns the engine's storage.IdempotencyKeys.
func (db *DB) IdempotencyKeys() *Keys { return &Keys{db} }

// Keys is the PostgreSQL storage.IdempotencyKeys. The row of a key is the
// cluster's one record of it: a reservation is one statement (an insert
// that replaces only an expired row), so two nodes racing for a key see
// one winner, and the loser reads the winner's row.
type Keys struct{ db *DB }

var _ storage.IdempotencyKeys = (*Keys)(nil)

func (k *Keys) Reserve(ctx context.Context, r *storage.KeyRecord, expiredBefore time.Time) (*storage.KeyRecord, error) {
	fp := r.Fingerprint
	if fp == nil {
		fp = []byte{}
	}
	now := r.CreatedAt.UnixNano()
	// A row deleted between the insert and the read (the sweep) makes
	// the insert win on the next round.
	for range 3 {
		var won bool
		err := k.db.pool.QueryRow(ctx, `INSERT INTO idempotency_keys AS k (tenant, key, fingerprint, owner, lease_ns, created_ns)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, owner = EXCLUDED.owner,
				lease_ns = EXCLUDED.lease_ns, created_ns = EXCLUDED.created_ns, done = false, status = 0, body = NULL
			WHERE (k.done AND k.created_ns < $7) OR (NOT k.done AND k.status = 0 AND k.lease_ns < $6)
			RETURNING true`, r.Tenant, r.Key, fp, r.Owner, r.LeaseUntil.UnixNano(), now, expiredBefore.UnixNano()).Scan(&won)
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("postgres: reserving idempotency key: %w", mapErr(err))
		}
		cur := &storage.KeyRecord{Tenant: r.Tenant, Key: r.Key}
		var lease, created int64
		err = k.db.pool.QueryRow(ctx, `SELECT fingerprint, owner, lease_ns, created_ns, done, status, body FROM idempotency_keys
			WHERE tenant = $1 AND key = $2`, r.Tenant, r.Key).Scan(&cur.Fingerprint, &cur.Owner, &lease, &created, &cur.Done, &cur.Status, &cur.Body)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("postgres: reading idempotency key: %w", mapErr(err))
		}
		cur.LeaseUntil, cur.CreatedAt = time.Unix(0, lease).UTC(), time.Unix(0, created).UTC()
		return cur, nil
	}
	return nil, storage.ErrConflict
}

func (k *Keys) Complete(ctx context.Context, tenant, key string, owner [16]byte, fp []byte, status int, body []byte) (bool, error) {
	if fp == nil {
		fp = []byte{}
	}
	tag, err := k.db.pool.Exec(ctx, `UPDATE idempotency_keys SET done = true, status = $4, body = $5::bytea,
		fingerprint = CASE WHEN length($6::bytea) > 0 THEN $6::bytea ELSE fingerprint END
		WHERE tenant = $1 AND key = $2 AND owner = $3`, tenant, key, owner, status, body, fp)
	if err != nil {
		return false, fmt.Errorf("postgres: completing idempotency key: %w", mapErr(err))
	}
	return tag.RowsAffected() == 1, nil
}

func (k *Keys) Release(ctx context.Context, tenant, key string, owner [16]byte) error {
	if _, err := k.db.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE tenant = $1 AND key = $2 AND owner = $3 AND status = 0 AND NOT done`,
		tenant, key, owner); err != nil {
		return fmt.Errorf("postgres: releasing idempotency key: %w", mapErr(err))
	}
	return nil
}

func (k *Keys) SweepKeys(ctx context.Context, before time.Time) (int64, error) {
	tag, err := k.db.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_ns < $1 AND (done OR lease_ns < $1)`, before.UnixNano())
	if err != nil {
		return 0, fmt.Errorf("postgres: sweeping idempotency keys: %w", mapErr(err))
	}
	return tag.RowsAffected(), nil
}

// writeKey writes tx's answer on its key inside the commit; ErrConflict
// when the attempt no longer holds the key.
func writeKey(ctx context.Context, ptx pgx.Tx, tx *storage.Tx) error {
	st := tx.Idempotency
	if st == nil {
		return nil
	}
	var lease int64
	if !st.LeaseUntil.IsZero() {
		lease = st.LeaseUntil.UnixNano()
	}
	tag, err := ptx.Exec(ctx, `UPDATE idempotency_keys SET status = $4, body = $5, lease_ns = CASE WHEN $6::bigint > 0 THEN $6::bigint ELSE lease_ns END
		WHERE tenant = $1 AND key = $2 AND owner = $3 AND NOT done`, tx.Tenant, st.Key, st.Owner, st.Status, st.Body, lease)
	if err != nil {
		return fmt.Errorf("postgres: writing idempotency key: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return storage.ErrConflict
	}
	return nil
}
