package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// Keypairs is the PostgreSQL storage.Keypairs (table iam_keypair).
type Keypairs struct{ db *DB }

// Keypairs returns the signing-keypair store of db.
func (db *DB) Keypairs() *Keypairs { return &Keypairs{db} }

const keypairCols = `kid, audience, algorithm, public_spki, private_pkcs8_sealed, active, valid_from, valid_to, is_bootstrap, retired, created_at`

// rotationLock serialises rotations of one audience across every node, so
// two concurrent rotations cannot each miss the other's new key.
const rotationLock = `SELECT pg_advisory_xact_lock(hashtext('svc.iam_keypair.rotate'), hashtext($1))`

func scanKeypair(row pgx.Row) (*storage.Keypair, error) {
	var k storage.Keypair
	err := row.Scan(&k.KID, &k.Audience, &k.Algorithm, &k.PublicSPKI, &k.PrivateSealed, &k.Active,
		&k.ValidFrom, &k.ValidTo, &k.Bootstrap, &k.Retired, &k.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	k.ValidFrom, k.ValidTo, k.CreatedAt = k.ValidFrom.UTC(), k.ValidTo.UTC(), k.CreatedAt.UTC()
	return &k, nil
}

func (s *Keypairs) GetKeypair(ctx context.Context, kid string) (*storage.Keypair, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	k, err := scanKeypair(c.QueryRow(ctx, `SELECT `+keypairCols+` FROM iam_keypair WHERE kid = $1`, kid))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("postgres: get keypair: %w", err)
	}
	return k, err
}

func (s *Keypairs) ListKeypairs(ctx context.Context) ([]*storage.Keypair, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, `SELECT `+keypairCols+` FROM iam_keypair ORDER BY kid`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list keypairs: %w", err)
	}
	defer rows.Close()
	out := []*storage.Keypair{}
	for rows.Next() {
		k, err := scanKeypair(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list keypairs: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

func (s *Keypairs) CreateKeypair(ctx context.Context, k *storage.Keypair, retireUntil *time.Time) (err error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tx, err := c.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: create keypair: %w", err)
	}
	defer tx.Rollback(ctx)
	if retireUntil != nil {
		if _, err := tx.Exec(ctx, rotationLock, k.Audience); err != nil {
			return fmt.Errorf("postgres: create keypair: rotation lock: %w", err)
		}
	}
	_, err = tx.Exec(ctx, `INSERT INTO iam_keypair (`+keypairCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
		k.KID, k.Audience, k.Algorithm, k.PublicSPKI, k.PrivateSealed, k.Active, k.ValidFrom, k.ValidTo, k.Bootstrap, k.Retired, k.CreatedAt)
	if isUniqueViolation(err) {
		return storage.ErrExists
	}
	if err != nil {
		return fmt.Errorf("postgres: create keypair: %w", err)
	}
	if retireUntil != nil {
		if _, err := tx.Exec(ctx, `UPDATE iam_keypair SET active = false, valid_to = LEAST(valid_to, $3)
			WHERE audience = $1 AND kid <> $2 AND active`, k.Audience, k.KID, *retireUntil); err != nil {
			return fmt.Errorf("postgres: create keypair: retiring the others: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: create keypair: commit: %w", err)
	}
	return nil
}

func (s *Keypairs) UpdateKeypair(ctx context.Context, kid string, fn func(*storage.Keypair) error) (*storage.Keypair, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	tx, err := c.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: update keypair: %w", err)
	}
	defer tx.Rollback(ctx)
	k, err := scanKeypair(tx.QueryRow(ctx, `SELECT `+keypairCols+` FROM iam_keypair WHERE kid = $1 FOR UPDATE`, kid))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("postgres: update keypair: %w", err)
	}
	if err := fn(k); err != nil {
		return nil, err
	}
	k.KID = kid
	if _, err := tx.Exec(ctx, `UPDATE iam_keypair SET audience=$2, algorithm=$3, public_spki=$4, private_pkcs8_sealed=$5,
		active=$6, valid_from=$7, valid_to=$8, is_bootstrap=$9, retired=$10 WHERE kid=$1`,
		kid, k.Audience, k.Algorithm, k.PublicSPKI, k.PrivateSealed, k.Active, k.ValidFrom, k.ValidTo, k.Bootstrap, k.Retired); err != nil {
		return nil, fmt.Errorf("postgres: update keypair: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres: update keypair: commit: %w", err)
	}
	return k, nil
}

func (s *Keypairs) DeleteKeypair(ctx context.Context, kid string) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tag, err := c.Exec(ctx, `DELETE FROM iam_keypair WHERE kid = $1`, kid)
	if err != nil {
		return fmt.Errorf("postgres: delete keypair: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return storage.ErrNotFound
	}
	return nil
}
