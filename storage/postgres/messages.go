package postgres

import (
	"context"
	"fmt"

	"svc/storage"
)

// Messages is the PostgreSQL storage.Messages.
type Messages struct{ db *DB }

// Messages returns the message store of db.
func (db *DB) Messages() *Messages { return &Messages{db} }

var _ storage.Messages = (*Messages)(nil)

func (s *Messages) PutMessage(ctx context.Context, m *storage.Message) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	_, err = c.Exec(ctx, `INSERT INTO messages (tenant, id, header, metadata, content, created_ns) VALUES ($1, $2, $3, $4, $5, $6)`,
		m.Tenant, m.ID, m.Header, m.MetaData, m.Content, m.CreatedAt.UnixNano())
	if err != nil {
		return fmt.Errorf("postgres: put message: %w", mapErr(err))
	}
	return nil
}

func (s *Messages) GetMessage(ctx context.Context, tenant string, id [16]byte) (*storage.Message, error) {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	m := &storage.Message{Tenant: tenant, ID: id}
	var created int64
	err = c.QueryRow(ctx, `SELECT header, metadata, content, created_ns FROM messages WHERE tenant = $1 AND id = $2`, tenant, id).
		Scan(&m.Header, &m.MetaData, &m.Content, &created)
	if err != nil {
		return nil, notFoundOr(err, "get message")
	}
	m.CreatedAt = unixNano(created)
	return m, nil
}

func (s *Messages) DeleteMessage(ctx context.Context, tenant string, id [16]byte) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tag, err := c.Exec(ctx, `DELETE FROM messages WHERE tenant = $1 AND id = $2`, tenant, id)
	if err != nil {
		return fmt.Errorf("postgres: delete message: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return storage.ErrNotFound
	}
	return nil
}

func (s *Messages) DeleteMessages(ctx context.Context, tenant string, ids [][16]byte) error {
	c, err := s.db.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	if _, err := c.Exec(ctx, `DELETE FROM messages WHERE tenant = $1 AND id = ANY($2)`, tenant, ids); err != nil {
		return fmt.Errorf("postgres: delete messages: %w", err)
	}
	return nil
}
