// Package search serves direct and asynchronous entity search: it
// validates a request against the model (condition, sort, limit),
// compiles the condition with predicate and runs it on a
// storage.Searcher. Async jobs run on a bounded worker pool and are stored
// (storage.SearchJobs), so any node can answer for them.
package search

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"svc/platform/apierr"
	"svc/platform/jsondoc"
	"svc/predicate"
	"svc/storage"
	"svc/storage/overlay"
	"svc/workflow"
)

// Limits of direct search (docs/decisions/0021-search.md).
const (
	DefaultLimit = 1000
	MaxLimit     = 10000
	// MaxBodyBytes bounds a condition body; larger is 400 BAD_REQUEST.
	MaxBodyBytes = 10 << 20
)

// Options are the search settings of config.Config.
type Options struct {
	MaxSortKeys     int
	Workers         int
	Queue           int
	MaxPerTenant    int
	Heartbeat       time.Duration
	StaleAfter      time.Duration
	MaxAttempts     int
	SnapshotTTL     time.Duration
	ReapInterval    time.Duration
	Now             func() time.Time
	OnBackgroundErr func(what string, err error)
	// Dispatcher answers function conditions (the compute server); nil
	// answers them 503 until SetDispatcher.
	Dispatcher workflow.CriteriaDispatcher
}

// Service is the search domain service.
type Service struct {
	models   storage.Models
	searcher storage.Searcher
	jobs     storage.SearchJobs
	opt      Options
	schemas  sync.Map // schemaKey → *schemaEntry
	dispatch atomic.Pointer[dispatcherRef]

	pool *pool
}

type schemaKey struct {
	tenant string
	model  storage.ModelKey
}

type schemaEntry struct {
	rev    int64
	schema *predicate.FieldMap
}

// New builds the service; jobs may be nil (async search then stays off).
// Start runs the async workers.
func New(models storage.Models, searcher storage.Searcher, jobs storage.SearchJobs, opt Options) *Service {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Workers < 1 {
		opt.Workers = 1
	}
	if opt.MaxAttempts < 1 {
		opt.MaxAttempts = 1
	}
	if opt.OnBackgroundErr == nil {
		opt.OnBackgroundErr = func(string, error) {}
	}
	// Requests that joined a transaction search its uncommitted writes too.
	s := &Service{models: models, searcher: overlay.Searcher(searcher), jobs: jobs, opt: opt}
	if opt.Dispatcher != nil {
		s.SetDispatcher(opt.Dispatcher)
	}
	if jobs != nil {
		s.pool = newPool(s)
	}
	return s
}

// Async reports whether async search is available.
func (s *Service) Async() bool { return s.pool != nil }

func (s *Service) schema(ctx context.Context, tenant string, key storage.ModelKey) (*predicate.FieldMap, error) {
	m, err := s.models.GetModel(ctx, tenant, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierr.New(apierr.ModelNotFound, "model "+key.Name+"/"+strconv.Itoa(key.Version)+" not found")
	}
	if err != nil {
		return nil, err
	}
	sk := schemaKey{tenant, key}
	if v, ok := s.schemas.Load(sk); ok && v.(*schemaEntry).rev == m.Revision {
		return v.(*schemaEntry).schema, nil
	}
	fm, err := schemaOf(m.Schema)
	if err != nil {
		return nil, err
	}
	s.schemas.Store(sk, &schemaEntry{rev: m.Revision, schema: fm})
	return fm, nil
}

// prepare runs the validation pipeline of docs/decisions/0021-search.md except the limit:
// parse, sort grammar, structure, model, paths and types, sort keys.
func (s *Service) prepare(ctx context.Context, tenant string, key storage.ModelKey, body []byte, sort []string, limit func() error) (*storage.SearchQuery, error) {
	if len(body) > MaxBodyBytes {
		return nil, apierr.New(apierr.BadRequest, "failed to read request body")
	}
	// What a search receives is stored text or nothing: a value that is
	// not storable text would only match nothing, and a member named twice
	// is ambiguous (I-JSON). The HTTP guard checks too; gRPC comes here.
	if err := jsondoc.Refusal(body, "condition"); err != nil {
		return nil, err
	}
	expr, perr := predicate.Parse(body)
	if perr != nil {
		if e, ok := apierr.As(perr); ok && e.Code == apierr.BadRequest {
			return nil, perr
		}
	}
	keys, err := parseSort(sort, s.opt.MaxSortKeys)
	if err != nil {
		return nil, err
	}
	if limit != nil {
		if err := limit(); err != nil {
			return nil, err
		}
	}
	if perr != nil {
		return nil, perr
	}
	fm, err := s.schema(ctx, tenant, key)
	if err != nil {
		return nil, err
	}
	cond, err := expr.Compile(fm)
	if err != nil {
		return nil, err
	}
	if cond.HasFunctions() {
		// Checked now so a malformed one is a 400 at submit, not a
		// failed job.
		if _, err := functionSpecs(cond); err != nil {
			return nil, err
		}
	}
	if err := checkSort(keys, fm); err != nil {
		return nil, err
	}
	// A lifecycle condition names its type in the body; with no escape in
	// the body that name cannot hide, so its absence means no meta field
	// is read.
	noMeta := !bytes.Contains(body, []byte(`"lifecycle"`)) && !bytes.ContainsRune(body, '\\')
	return &storage.SearchQuery{Tenant: tenant, Model: key, Cond: cond, Sort: keys, NoMeta: noMeta}, nil
}

// ParseLimit reads the direct-search limit: default 1000, 1..10000.
func ParseLimit(raw []byte) (int, error) {
	if raw == nil {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 1 {
		return 0, apierr.New(apierr.BadRequest, "invalid limit", apierr.P("parameter", "limit"))
	}
	if n > MaxLimit {
		return 0, apierr.New(apierr.BadRequest, "limit exceeds maximum "+strconv.Itoa(MaxLimit), apierr.P("parameter", "limit"))
	}
	return n, nil
}

// DirectRequest is a direct search.
type DirectRequest struct {
	Tenant    string
	Model     storage.ModelKey
	Condition []byte
	Sort      []string
	// Limit is the raw limit parameter (nil: default).
	Limit []byte
	At    *time.Time
}

// Direct runs a bounded-or-fail search: every match in order, or 400
// SEARCH_RESULT_LIMIT when there are more than the limit.
func (s *Service) Direct(ctx context.Context, r *DirectRequest) ([]*storage.Entity, error) {
	var limit int
	q, err := s.prepare(ctx, r.Tenant, r.Model, r.Condition, r.Sort, func() (err error) {
		limit, err = ParseLimit(r.Limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	q.At, q.Max = r.At, limit
	es, err := s.run(ctx, q, authOf(ctx))
	if err != nil {
		return nil, err
	}
	if len(es) > limit {
		return nil, apierr.New(apierr.SearchResultLimit, "matched result count exceeds the configured limit",
			apierr.P("limit", limit))
	}
	return es, nil
}

// run is Search with function criteria: the engine evaluates the
// condition's Pushdown (a superset, sorted), and each candidate is then
// decided by the full condition with compute members answering the
// functions, until more than q.Max have matched. The limit therefore
// applies after the re-check. Every candidate is read before the first
// call, so memory grows with the candidates, not with the matches: a
// selective simple leaf next to the function keeps both small.
func (s *Service) run(ctx context.Context, q *storage.SearchQuery, auth workflow.Auth) ([]*storage.Entity, error) {
	if q.Cond == nil || !q.Cond.HasFunctions() {
		return s.searcher.Search(ctx, q)
	}
	f, err := s.functions(ctx, q.Tenant, q.Model, q.Cond, auth)
	if err != nil {
		return nil, err
	}
	pq := *q
	pq.Cond, pq.Max = q.Cond.Pushdown(), 0
	cands, err := s.searcher.Search(ctx, &pq)
	if err != nil {
		return nil, err
	}
	return f.filter(cands, q.Max)
}

// Condition validates and compiles a condition against a model of the
// tenant (404 MODEL_NOT_FOUND, then the predicate's path and type checks),
// for other areas that take conditions (grouped stats, delete by
// condition). Function criteria are returned compiled; EntityFilter
// answers them.
func (s *Service) Condition(ctx context.Context, tenant string, key storage.ModelKey, body []byte) (*predicate.Condition, error) {
	if err := jsondoc.Refusal(body, "condition"); err != nil {
		return nil, err
	}
	expr, err := predicate.Parse(body)
	if err != nil {
		return nil, err
	}
	fm, err := s.schema(ctx, tenant, key)
	if err != nil {
		return nil, err
	}
	return expr.Compile(fm)
}
