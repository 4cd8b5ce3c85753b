package streamdata

import (
	"context"

	json "github.com/goccy/go-json"

	"svc/storage"
)

// Explainer renders the engine's own plan of a page's statement
// (PostgreSQL: EXPLAIN (FORMAT JSON), never ANALYZE) and the statement.
type Explainer interface {
	ExplainStream(ctx context.Context, q *storage.StreamQuery) (plan json.RawMessage, sql string, err error)
	// IndexDDL is the statement that would build ix (what the
	// composite-index extension runs for it).
	IndexDDL(ix *storage.StreamIndex) (string, error)
}
