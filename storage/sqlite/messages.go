package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"svc/storage"
)

// Messages is the SQLite storage.Messages.
type Messages struct{ db *DB }

// Messages returns the message store of db.
func (db *DB) Messages() *Messages { return &Messages{db} }

func (s *Messages) PutMessage(ctx context.Context, m *storage.Message) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		res, err := w.exec(`INSERT INTO messages (id, tenant, header, metadata, content, created_ns) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, m.ID[:], m.Tenant, docArg(m.Header), docArg(m.MetaData), docArg(m.Content), ns(m.CreatedAt))
		if err != nil {
			return fmt.Errorf("sqlite: writing message: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return storage.ErrExists
		}
		return nil
	})
}

func (s *Messages) GetMessage(ctx context.Context, tenant string, id [16]byte) (*storage.Message, error) {
	m := storage.Message{Tenant: tenant, ID: id}
	var created int64
	err := s.db.queryRow(ctx, `SELECT header, metadata, content, created_ns FROM messages WHERE id = ? AND tenant = ?`, id[:], tenant).
		Scan(&m.Header, &m.MetaData, &m.Content, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading message: %w", err)
	}
	m.CreatedAt = fromNS(created)
	return &m, nil
}

func (s *Messages) DeleteMessage(ctx context.Context, tenant string, id [16]byte) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		res, err := w.exec(`DELETE FROM messages WHERE id = ? AND tenant = ?`, id[:], tenant)
		if err != nil {
			return fmt.Errorf("sqlite: deleting message: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return storage.ErrNotFound
		}
		return nil
	})
}

func (s *Messages) DeleteMessages(ctx context.Context, tenant string, ids [][16]byte) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		for _, id := range ids {
			if _, err := w.exec(`DELETE FROM messages WHERE id = ? AND tenant = ?`, id[:], tenant); err != nil {
				return fmt.Errorf("sqlite: deleting messages: %w", err)
			}
		}
		return nil
	})
}
