// Package model is the entity-model lifecycle: import and merge, lock and
// unlock, change level, unique keys, export and validation, and the gate
// entity writes pass through (Admit). Schemas come from the inference
// engine (infer/); records live behind storage.Models, scoped by tenant.
package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"svc/infer"
	"svc/platform/apierr"
	"svc/platform/jsondoc"
	"svc/storage"
)

// States of a model (docs/decisions/0012-model-lifecycle-and-validation.md).
const (
	Locked   = "LOCKED"
	Unlocked = "UNLOCKED"
)

// Body limits of the model API; over them the request is a 400, not a 413
// (docs/decisions/0012-model-lifecycle-and-validation.md).
const (
	MaxBodyBytes       = 10 << 20 // import, validate
	MaxUniqueKeysBytes = 1 << 20
)

// ChangeLevels in ascending order; each level permits the changes of the
// lower ones.
var ChangeLevels = []string{"ARRAY_LENGTH", "ARRAY_ELEMENTS", "TYPE", "STRUCTURAL"}

// EntityCounter tells how many live entities a model has; unlock and
// delete need none. The entity store implements it.
type EntityCounter interface {
	CountEntities(ctx context.Context, tenant string, key storage.ModelKey) (int64, error)
}

// StoreCounter is an EntityCounter over an entity store: serve builds the
// model service before the entity service (which gates its writes through
// the model service), so it counts in the store the entity service reads
// (with its overlay, so a joined request sees its own writes).
type StoreCounter struct{ Store storage.Entities }

// CountEntities implements EntityCounter.
func (c StoreCounter) CountEntities(ctx context.Context, tenant string, key storage.ModelKey) (int64, error) {
	return c.Store.Count(ctx, tenant, key)
}

// Service runs model operations for one deployment. It is safe for
// concurrent use.
type Service struct {
	store      storage.Models
	entities   atomic.Pointer[counterBox]
	maxRetries int
	cache      parsedCache
	onChange   atomic.Pointer[changeBox] // ChangeFunc of cluster mode
	// widening serialises, per model, the writes of this process that
	// widen a schema (cacheKey → *sync.Mutex); see Admit.
	widening sync.Map
	lease    time.Duration    // SVC_MODEL_CACHE_LEASE
	now      func() time.Time // nil: time.Now
	// limits bound every request document; storedLimits bound the stored
	// schemas, which legitimately grow past one document's field count.
	limits       infer.Limits
	storedLimits infer.Limits
}

type counterBox struct{ c EntityCounter }

// Option configures a Service.
type Option func(*Service)

// WithMaxRetries bounds the retries of a write that lost an optimistic
// revision race (SVC_SCHEMA_EXTEND_MAX_RETRIES).
func WithMaxRetries(n int) Option {
	return func(s *Service) {
		if n > 0 {
			s.maxRetries = n
		}
	}
}

// WithLimits sets the bounds on request documents.
func WithLimits(l infer.Limits) Option {
	return func(s *Service) { s.limits = l }
}

// New returns a service over store. entities may be nil (no entities
// anywhere) and set later with SetEntityCounter, because the entity service
// itself needs this service as its gate.
func New(store storage.Models, entities EntityCounter, opts ...Option) *Service {
	s := &Service{store: store, maxRetries: 8, limits: infer.DefaultLimits()}
	s.SetEntityCounter(entities)
	for _, o := range opts {
		o(s)
	}
	s.storedLimits = storedLimits(s.limits)
	return s
}

// SetEntityCounter wires the entity store once it exists.
func (s *Service) SetEntityCounter(c EntityCounter) {
	if c == nil {
		s.entities.Store(nil)
		return
	}
	s.entities.Store(&counterBox{c})
}

// ID is the model's deterministic id: UUIDv5 in the URL namespace over
// "<name>.<version>", the same on every node and backend.
func ID(key storage.ModelKey) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(key.Name+"."+strconv.Itoa(key.Version))).String()
}

// Summary is one element of GET /model/ (EntityModelDto).
type Summary struct {
	ID           string `json:"id"`
	ModelName    string `json:"modelName"`
	ModelVersion int    `json:"modelVersion"`
	CurrentState string `json:"currentState"`
	UpdateDate   string `json:"modelUpdateDate"`
}

// ActionResult is the body of lock, unlock, delete, changeLevel,
// unique-keys and validate (EntityModelActionResultDto).
type ActionResult struct {
	Success  bool   `json:"success"`
	Message  string `json:"message"`
	ModelID  string `json:"modelId"`
	ModelKey KeyDTO `json:"modelKey"`
}

// KeyDTO is the wire form of a model key.
type KeyDTO struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
}

func result(key storage.ModelKey, ok bool, msg string) *ActionResult {
	return &ActionResult{Success: ok, Message: msg, ModelID: ID(key), ModelKey: KeyDTO{key.Name, key.Version}}
}

func keyProps(key storage.ModelKey) []apierr.Prop {
	return []apierr.Prop{apierr.P("entityName", key.Name), apierr.P("entityVersion", key.Version)}
}

func notFound(key storage.ModelKey) error {
	return apierr.New(apierr.ModelNotFound, fmt.Sprintf("cannot find model entityName=%s, version=%d", key.Name, key.Version), keyProps(key)...)
}

func badParam(name, value, msg string) error {
	return apierr.New(apierr.BadRequest, msg, apierr.P("parameter", name), apierr.P("invalidValue", value))
}

func stateConflict(code apierr.Code, key storage.ModelKey, msg, expected, actual string) error {
	props := append(keyProps(key), apierr.P("expectedState", expected), apierr.P("actualState", actual))
	return apierr.New(code, msg, props...)
}

func alreadyLocked(key storage.ModelKey, msg string) error {
	return stateConflict(apierr.ModelAlreadyLocked, key, msg, Unlocked, Locked)
}

// get loads a model or answers MODEL_NOT_FOUND. Another tenant's model is
// simply absent: the store is keyed by tenant.
func (s *Service) get(ctx context.Context, tenant string, key storage.ModelKey) (*storage.Model, error) {
	// PostgreSQL cannot look up a name that is not text; gRPC callers are
	// not behind the HTTP guard.
	if err := jsondoc.TextProblem("parameter", "entityName", key.Name); err != nil {
		return nil, err
	}
	m, err := s.store.GetModel(ctx, tenant, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, notFound(key)
	}
	if err != nil {
		return nil, fmt.Errorf("loading model %s:%d: %w", key.Name, key.Version, err)
	}
	return m, nil
}

// update loads the model, lets change edit it and writes it back, retrying
// when a concurrent writer moved the revision on. change returns
// errUnchanged to skip the write.
func (s *Service) update(ctx context.Context, tenant string, key storage.ModelKey, what string, change func(*storage.Model) error) (*storage.Model, error) {
	for attempt := 0; ; attempt++ {
		m, err := s.get(ctx, tenant, key)
		if err != nil {
			return nil, err
		}
		rev, schema := m.Revision, m.Schema
		if err := change(m); err != nil {
			if errors.Is(err, errUnchanged) {
				return m, nil
			}
			return nil, err
		}
		err = s.store.PutModel(ctx, m)
		if err == nil {
			if bytes.Equal(schema, m.Schema) {
				s.cache.advance(tenant, key, rev, m.Revision)
			}
			s.changed(tenant, key)
			return m, nil
		}
		if !errors.Is(err, storage.ErrConflict) || attempt+1 >= s.maxRetries {
			return nil, fmt.Errorf("%s model %s:%d: %w", what, key.Name, key.Version, err)
		}
	}
}

var errUnchanged = errors.New("model: unchanged")

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// storedLimits relaxes the request limits for decoding stored schemas: a
// model is the union of many documents, so it may hold more fields than
// any one of them, and it was bounded when each part came in.
func storedLimits(l infer.Limits) infer.Limits {
	d := infer.DefaultLimits()
	if l.MaxFields <= 0 {
		l.MaxFields = d.MaxFields
	}
	l.MaxFields *= 64
	l.MaxBytes = 1 << 30
	return l
}

// xmlMaxNodes bounds XML elements plus attributes; a sample larger than
// this is not a sample.
func (s *Service) xmlMaxNodes() int {
	if s.limits.MaxFields > 0 && s.limits.MaxFields*16 > 1<<18 {
		return s.limits.MaxFields * 16
	}
	return 1 << 18
}
