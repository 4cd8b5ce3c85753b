package storage

import (
	"context"
	"errors"
	"time"

	"svc/predicate"
)

// ErrScanBudget: a search would examine more rows than the engine's scan
// limit allows (SQLite's SVC_SQLITE_SEARCH_SCAN_LIMIT); the API answers 400
// SCAN_BUDGET_EXHAUSTED. Not retryable: narrow the search or raise the limit.
var ErrScanBudget = errors.New("storage: search scan budget exhausted")

// SortField is what a sort key reads: a data path or one meta field.
type SortField uint8

const (
	SortData SortField = iota
	SortID
	SortState
	SortCreated
	SortUpdated
	SortTransition
	SortTxID
)

// SortClass is how a data sort key compares, derived from the declared
// types of its path: every engine orders the same way.
type SortClass uint8

const (
	// SortText compares JSON strings by byte order; other kinds are missing.
	SortText SortClass = iota
	// SortNumber compares JSON numbers by value; other kinds are missing.
	SortNumber
	// SortBool orders false before true; other kinds are missing.
	SortBool
)

// SortKey is one validated sort key. Missing values (absent, JSON null, an
// empty meta string) sort last in both directions.
type SortKey struct {
	Field SortField
	// Path holds the object member names of a data key ($.a.b → [a b]).
	Path  []string
	Class SortClass
	Desc  bool
}

// SearchQuery is a compiled search over one model of one tenant.
type SearchQuery struct {
	Tenant string
	Model  ModelKey
	Cond   *predicate.Condition
	Sort   []SortKey
	// At reads the revisions live at that instant (inclusive); nil reads
	// the current ones.
	At *time.Time
	// Max > 0 stops after Max+1 matches, which is enough for the caller to
	// tell "more than Max" (bounded-or-fail); 0 returns every match.
	Max int
	// NoMeta promises the condition reads no lifecycle field, so an engine
	// that evaluates in Go may skip building each row's predicate.Meta.
	NoMeta bool
}

// Searcher runs searches over the entity store, read-only. Results come in
// sort-key order with entity id ascending as the final tie-breaker.
type Searcher interface {
	Search(ctx context.Context, q *SearchQuery) ([]*Entity, error)
	// SearchIDs is Search returning only ids, for async snapshots.
	SearchIDs(ctx context.Context, q *SearchQuery) ([][16]byte, error)
	// Fetch reads the given entities (as of at when non-nil) in the order
	// of ids; an id not live then is skipped.
	Fetch(ctx context.Context, tenant string, ids [][16]byte, at *time.Time) ([]*Entity, error)
}
