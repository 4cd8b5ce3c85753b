package storage

import (
	"context"
	"time"
)

// ModelKey names a model within a tenant.
type ModelKey struct {
	Name    string
	Version int
}

// Model is the stored form of an entity model. Schema is the model in the
// inference engine's SIMPLE_VIEW bytes, so every engine stores one opaque,
// round-trippable document.
type Model struct {
	Tenant      string
	Key         ModelKey
	State       string // LOCKED or UNLOCKED
	ChangeLevel string // "" or ARRAY_LENGTH, ARRAY_ELEMENTS, TYPE, STRUCTURAL
	Schema      []byte
	UniqueKeys  []byte // JSON, as set by PUT .../unique-keys
	Workflows   []byte // JSON, as imported
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Revision increases on every write; PutModel compares it to detect
	// concurrent writers.
	Revision int64
}

// Models stores entity models per tenant.
//
// GetModel and ListModels return records the caller owns, but their byte
// slices (Schema, UniqueKeys, Workflows) may be shared with the store and
// other readers: replace them, never write into them. Every entity write
// reads its model, and copying the SIMPLE_VIEW each time was a tenth of a
// memory-engine create.
type Models interface {
	GetModel(ctx context.Context, tenant string, key ModelKey) (*Model, error)
	ListModels(ctx context.Context, tenant string) ([]*Model, error)
	// PutModel writes m when the stored revision equals m.Revision (0 for a
	// new model) and advances m.Revision; otherwise ErrConflict.
	PutModel(ctx context.Context, m *Model) error
	DeleteModel(ctx context.Context, tenant string, key ModelKey) error
}
