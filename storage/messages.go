package storage

import (
	"context"
	"time"
)

// Message is one posted message. Header and MetaData are JSON objects as
// the API renders them; Content is the compacted payload JSON.
type Message struct {
	Tenant    string
	ID        [16]byte
	Header    []byte
	MetaData  []byte
	Content   []byte
	CreatedAt time.Time
}

// Messages stores messages per tenant; another tenant's message is
// ErrNotFound.
type Messages interface {
	PutMessage(ctx context.Context, m *Message) error
	GetMessage(ctx context.Context, tenant string, id [16]byte) (*Message, error)
	// DeleteMessage: ErrNotFound when absent.
	DeleteMessage(ctx context.Context, tenant string, id [16]byte) error
	// DeleteMessages removes those of ids that exist.
	DeleteMessages(ctx context.Context, tenant string, ids [][16]byte) error
}
