package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"svc/storage"
)

// IdempotencyKeys returns the engine's storage.IdempotencyKeys.
func (db *DB) IdempotencyKeys() *Keys { return &Keys{db} }

// Keys is the SQLite storage.IdempotencyKeys; every call is one job of the
// single writer, so a reservation is atomic.
type Keys struct{ db *DB }

var _ storage.IdempotencyKeys = (*Keys)(nil)

func (k *Keys) Reserve(ctx context.Context, r *storage.KeyRecord, expiredBefore time.Time) (*storage.KeyRecord, error) {
	var out *storage.KeyRecord
	err := k.db.w.writePure(ctx, func(w *wtx) error {
		out = nil
		cur := storage.KeyRecord{Tenant: r.Tenant, Key: r.Key}
		var lease, created, done int64
		var owner []byte
		err := w.queryRow(`SELECT fingerprint, owner, lease_ns, created_ns, done, status, body FROM idempotency_keys WHERE tenant = ? AND key = ?`,
			r.Tenant, r.Key).Scan(&cur.Fingerprint, &owner, &lease, &created, &done, &cur.Status, &cur.Body)
		switch {
		case err == nil:
			copy(cur.Owner[:], owner)
			cur.LeaseUntil, cur.CreatedAt, cur.Done = fromNS(lease), fromNS(created), done != 0
			keep := cur.Status != 0 || lease >= r.CreatedAt.UnixNano()
			if cur.Done {
				keep = created >= expiredBefore.UnixNano()
			}
			if keep {
				out = &cur
				return nil
			}
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("sqlite: reading idempotency key: %w", err)
		}
		fp := r.Fingerprint
		if fp == nil {
			fp = []byte{}
		}
		_, err = w.exec(`INSERT OR REPLACE INTO idempotency_keys (tenant, key, fingerprint, owner, lease_ns, created_ns, done, status, body)
			VALUES (?, ?, ?, ?, ?, ?, 0, 0, NULL)`, r.Tenant, r.Key, fp, r.Owner[:], r.LeaseUntil.UnixNano(), r.CreatedAt.UnixNano())
		if err != nil {
			return fmt.Errorf("sqlite: reserving idempotency key: %w", err)
		}
		return nil
	})
	return out, err
}

func (k *Keys) Complete(ctx context.Context, tenant, key string, owner [16]byte, fp []byte, status int, body []byte) (bool, error) {
	var ok bool
	err := k.db.w.writePure(ctx, func(w *wtx) error {
		res, err := w.exec(`UPDATE idempotency_keys SET done = 1, status = ?, body = ?,
			fingerprint = CASE WHEN length(?) > 0 THEN ? ELSE fingerprint END
			WHERE tenant = ? AND key = ? AND owner = ?`, status, body, fp, fp, tenant, key, owner[:])
		if err != nil {
			return fmt.Errorf("sqlite: completing idempotency key: %w", err)
		}
		n, _ := res.RowsAffected()
		ok = n == 1
		return nil
	})
	return ok, err
}

func (k *Keys) Release(ctx context.Context, tenant, key string, owner [16]byte) error {
	return k.db.w.writePure(ctx, func(w *wtx) error {
		if _, err := w.exec(`DELETE FROM idempotency_keys WHERE tenant = ? AND key = ? AND owner = ? AND status = 0 AND done = 0`,
			tenant, key, owner[:]); err != nil {
			return fmt.Errorf("sqlite: releasing idempotency key: %w", err)
		}
		return nil
	})
}

func (k *Keys) SweepKeys(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := k.db.w.write(ctx, func(w *wtx) error {
		res, err := w.exec(`DELETE FROM idempotency_keys WHERE created_ns < ? AND (done = 1 OR lease_ns < ?)`, before.UnixNano(), before.UnixNano())
		if err != nil {
			return fmt.Errorf("sqlite: sweeping idempotency keys: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

// writeKey writes tx's answer on its key inside the commit; ErrConflict
// when the attempt no longer holds the key.
func writeKey(w *wtx, tx *storage.Tx) error {
	st := tx.Idempotency
	if st == nil {
		return nil
	}
	res, err := w.exec(`UPDATE idempotency_keys SET status = ?, body = ?, lease_ns = CASE WHEN ? > 0 THEN ? ELSE lease_ns END
		WHERE tenant = ? AND key = ? AND owner = ? AND done = 0`,
		st.Status, st.Body, ns(st.LeaseUntil), ns(st.LeaseUntil), tx.Tenant, st.Key, st.Owner[:])
	if err != nil {
		return fmt.Errorf("sqlite: writing idempotency key: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return storage.ErrConflict
	}
	return nil
}
