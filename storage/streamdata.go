package storage

import (
	"context"
	"time"
)

// StreamConfig is a saved stream-data definition (a Cloud "stream report").
// Def is the submitted streamDataDef JSON verbatim, so the Joda-bean keys a
// UI wrote round-trip unchanged; RequestClass is copied out of it for the
// export-by-class filter.
type StreamConfig struct {
	Tenant       string
	ID           [16]byte
	Name         string
	Description  string
	Owner        string
	RequestClass string
	CreatedAt    time.Time
	Def          []byte
}

// StreamConfigs stores stream-data definitions per tenant; another
// tenant's definition is ErrNotFound.
type StreamConfigs interface {
	// CreateStreamConfig stores a new definition; ErrExists when the id is
	// taken in the tenant.
	CreateStreamConfig(ctx context.Context, c *StreamConfig) error
	// UpdateStreamConfig replaces name, description, request class and
	// definition (owner and creation date stay); ErrNotFound when absent.
	UpdateStreamConfig(ctx context.Context, c *StreamConfig) error
	GetStreamConfig(ctx context.Context, tenant string, id [16]byte) (*StreamConfig, error)
	// ListStreamConfigs returns the tenant's definitions by creation date,
	// then id.
	ListStreamConfigs(ctx context.Context, tenant string) ([]*StreamConfig, error)
	// DeleteStreamConfig: ErrNotFound when absent.
	DeleteStreamConfig(ctx context.Context, tenant string, id [16]byte) error
}

// StreamMark is a position in a stream: the range value and entity id of
// a row. Text is the value as the engine renders it for a keyset bound
// (a PostgreSQL engine sets it; memory compares Value).
type StreamMark struct {
	Value SortValue
	Text  string
	ID    [16]byte
}

// StreamQuery is one keyset page of a stream read: the live entities of
// the model as of At that the condition selects and that have a value for
// Range, ordered by that value in Range's direction then by id in the same
// direction, starting strictly after After (nil: from the start), skipping
// Skip rows, at most Limit rows.
type StreamQuery struct {
	Search SearchQuery
	Range  SortKey
	After  *StreamMark
	Skip   int
	Limit  int
	// Stream identifies the stream (tenant, definition, point in time):
	// every page of one Stream reads the same snapshot, so an engine may
	// keep the snapshot's order under it. "" when not a paged read.
	Stream string
	// Eq are equalities the condition already implies (string values at
	// data paths, top-level AND); an engine may add them to reach a
	// composite index. They never widen the selection.
	Eq []EqHint
}

// EqHint is one implied equality: the string at a data path.
type EqHint struct {
	Path  []string
	Value string
}

// StreamPager reads stream pages in the engine (PostgreSQL: keyset SQL).
// fn sees each row in order with its mark; an error from fn ends the read.
// Engines without one are served by sorting a Searcher result.
type StreamPager interface {
	StreamPage(ctx context.Context, q *StreamQuery, fn func(e *Entity, m StreamMark) error) error
}

// StreamIndex is a user composite index for stream reads: equality
// fields plus one range field, over one model's current entities.
type StreamIndex struct {
	Tenant    string
	ID        [16]byte
	Model     ModelKey
	Name      string
	RangePath string
	EqPaths   []string
	// PgIndex is the engine's index name ("" on memory).
	PgIndex   string
	CreatedAt time.Time
	// Range is the range field's sort key (its class picks the index
	// expression); set by the caller of CreateStreamIndex.
	Range SortKey
	// Ready: built and usable (PostgreSQL: pg_index.indisvalid AND
	// indisready; memory: always).
	Ready bool
}

// StreamIndexes stores user composite indexes. CreateStreamIndex builds the
// index (PostgreSQL: CREATE INDEX CONCURRENTLY) before it returns.
type StreamIndexes interface {
	CreateStreamIndex(ctx context.Context, ix *StreamIndex) error
	ListStreamIndexes(ctx context.Context, tenant string, model ModelKey) ([]*StreamIndex, error)
	DropStreamIndex(ctx context.Context, tenant string, id [16]byte) error
}
