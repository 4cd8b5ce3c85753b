package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	json "github.com/goccy/go-json"

	"svc/storage"
)

var errNotFound = storage.ErrNotFound

// Small records (IAM, revocations, SQL schemas, stream-data definitions)
// are JSON documents in the records table, keyed by (kind, key) with the
// tenant beside for listing. They are few and rarely written; the rules
// that span several of them (a tenant's cap on trusted keys, providers
// shared across tenants, keypair rotation) read and write them inside one
// job of the single writer, which makes each rule one atomic step without
// any SQL of its own, the same code shape as the memory engine.

const (
	kindClient       = "m2m_client"
	kindKeypair      = "keypair"
	kindTrustedKey   = "trusted_key"
	kindProvider     = "oidc_provider"
	kindRevoked      = "revoked_token"
	kindSQLSchema    = "sql_schema"
	kindStreamConfig = "stream_config"
	kindStreamIndex  = "stream_index"
)

// tenantKey is the key of a record whose id is unique within its tenant.
func tenantKey(tenant, id string) string { return tenant + "\x00" + id }

// getRecord reads one record through the read pool.
func getRecord[T any](ctx context.Context, db *DB, kind, key string) (*T, error) {
	var body []byte
	err := db.queryRow(ctx, `SELECT body FROM records WHERE kind = ? AND key = ?`, kind, key).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading %s: %w", kind, err)
	}
	return decode[T](kind, body)
}

func decode[T any](kind string, body []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("sqlite: decoding %s: %w", kind, err)
	}
	return v, nil
}

// listRecords reads every record of a kind (of one tenant when tenant is
// non-nil) through the read pool, in key order.
func listRecords[T any](ctx context.Context, db *DB, kind string, tenant *string) ([]*T, error) {
	var rows *sql.Rows
	var err error
	if tenant == nil {
		rows, err = db.query(ctx, `SELECT body FROM records WHERE kind = ? ORDER BY key`, kind)
	} else {
		rows, err = db.query(ctx, `SELECT body FROM records WHERE kind = ? AND tenant = ? ORDER BY key`, kind, *tenant)
	}
	if err != nil {
		return nil, err
	}
	return decodeRows[T](kind, rows)
}

func decodeRows[T any](kind string, rows *sql.Rows) ([]*T, error) {
	defer rows.Close()
	out := []*T{}
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("sqlite: reading %s: %w", kind, err)
		}
		v, err := decode[T](kind, body)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: reading %s: %w", kind, err)
	}
	return out, nil
}

// wgetRecord reads a record inside a write job.
func wgetRecord[T any](w *wtx, kind, key string) (*T, error) {
	var body []byte
	err := w.queryRow(`SELECT body FROM records WHERE kind = ? AND key = ?`, kind, key).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading %s: %w", kind, err)
	}
	return decode[T](kind, body)
}

// wlistRecords reads every record of a kind (of one tenant when tenant is
// non-nil) inside a write job.
func wlistRecords[T any](w *wtx, kind string, tenant *string) ([]*T, error) {
	var rows *sql.Rows
	var err error
	if tenant == nil {
		rows, err = w.query(`SELECT body FROM records WHERE kind = ? ORDER BY key`, kind)
	} else {
		rows, err = w.query(`SELECT body FROM records WHERE kind = ? AND tenant = ? ORDER BY key`, kind, *tenant)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading %s: %w", kind, err)
	}
	return decodeRows[T](kind, rows)
}

// wputRecord inserts or replaces a record inside a write job.
func wputRecord(w *wtx, kind, key, tenant string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sqlite: encoding %s: %w", kind, err)
	}
	if _, err := w.exec(`INSERT INTO records (kind, key, tenant, body) VALUES (?, ?, ?, ?)
		ON CONFLICT (kind, key) DO UPDATE SET tenant = excluded.tenant, body = excluded.body`, kind, key, tenant, body); err != nil {
		return fmt.Errorf("sqlite: writing %s: %w", kind, err)
	}
	return nil
}

// wdelRecord deletes a record inside a write job; errNotFound when absent.
func wdelRecord(w *wtx, kind, key string) error {
	res, err := w.exec(`DELETE FROM records WHERE kind = ? AND key = ?`, kind, key)
	if err != nil {
		return fmt.Errorf("sqlite: deleting %s: %w", kind, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNotFound
	}
	return nil
}
