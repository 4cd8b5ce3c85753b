// Package entity is the entity lifecycle: create (single, array, mixed
// collection) in chunked transactions, read (latest, as at an instant or a
// transaction), list, replace, merge-patch, delete, revision history,
// available transitions and statistics. Writes are admitted through the
// model gate and routed through a workflow; records live behind
// storage.Entities, scoped by tenant.
package entity

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/platform/jsondoc"
	"svc/storage"
	"svc/storage/overlay"
)

// ModelGate checks documents against a LOCKED model and widens the model
// when its change level allows (CONTRACTS.md); *model.Service satisfies it.
type ModelGate interface {
	Admit(ctx context.Context, tenant string, key storage.ModelKey, docs [][]byte) error
}

// LoadedGate is a ModelGate that can admit against a model record the
// caller has just read for the same request (model.Service.AdmitLoaded),
// sparing a second read of the model.
type LoadedGate interface {
	AdmitLoaded(ctx context.Context, m *storage.Model, docs [][]byte) error
}

// StrictGate validates without ever widening the model. Merge-patch results
// must fit the model as it is; a gate that cannot do this makes PATCH fall
// back to Admit.
type StrictGate interface {
	Validate(ctx context.Context, tenant string, key storage.ModelKey, doc []byte) error
}

// Actor is who a request acts for.
type Actor struct {
	Tenant string
	User   string
	// Kind is the principal's kind (user, service, system); with User it
	// attributes the revisions the actor writes (docs/decisions/0014-entities.md).
	Kind string
}

// attribution is what a's writes record beside User: a acts itself, so
// it is both the attributed principal and the executor. Nil without a
// kind (callers that predate it), so the history omits both fields.
func (a Actor) attribution() *storage.Attribution {
	if a.Kind == "" {
		return nil
	}
	return &storage.Attribution{UserKind: a.Kind, ExecID: a.User, ExecKind: a.Kind}
}

// scheduledAttribution is a scheduled fire's: attributed to the arming
// principal (the task keeps its id and kind), executed by the system
// principal. A task armed before kinds were kept has none, and the history
// then omits attributedKind for its fire.
func scheduledAttribution(t *storage.ScheduledTask) *storage.Attribution {
	return &storage.Attribution{UserKind: t.UserKind, ExecID: "system", ExecKind: "system"}
}

// Model states (docs/decisions/0012-model-lifecycle-and-validation.md).
const locked = "LOCKED"

// Limits of the entity API (docs/decisions/0014-entities.md).
const (
	DefaultWindow = 100
	MaxWindow     = 1000
	MaxPageSize   = 10000
	MaxPageNumber = 214748
	MaxChanges    = 1000
	MaxStates     = 1000
	// MaxBodyBytes is the body limit of every entity write.
	MaxBodyBytes = 10 << 20
)

// Service runs entity operations. It is safe for concurrent use.
type Service struct {
	store    storage.Entities
	models   storage.Models
	gate     ModelGate
	wf       Workflow
	groupMax int
	// maxPerRequest is SVC_MAX_ENTITIES_PER_REQUEST.
	maxPerRequest int
	xmlToJSON     func([]byte) ([]byte, error)
	conds         ConditionCompiler
	tasks         storage.ScheduledTasks
	// joins are the transactions open to compute-member callbacks.
	joins *joins
	// keys are the compiled unique keys of models (unique.go).
	keys keyCache
	// patchHook observes the phases of merge patches (WithPatchHook).
	patchHook func(context.Context, PatchPhase)
}

// Option configures a Service.
type Option func(*Service)

// WithWorkflow replaces the default workflow (the workflow engine plugs in
// here).
func WithWorkflow(w Workflow) Option { return func(s *Service) { s.wf = w } }

// WithGroupMax sets SVC_STATS_GROUP_MAX; values ≤ 0 keep the default 10000.
func WithGroupMax(n int) Option {
	return func(s *Service) {
		if n > 0 {
			s.groupMax = n
		}
	}
}

// WithXML enables the XML format with a converter to an equivalent JSON
// document; without it XML bodies are 400 "unsupported format".
func WithXML(conv func([]byte) ([]byte, error)) Option {
	return func(s *Service) { s.xmlToJSON = conv }
}

// New returns a service over store. gate admits documents into models.
func New(store storage.Entities, models storage.Models, gate ModelGate, opts ...Option) *Service {
	// Requests that joined a transaction read its uncommitted writes.
	s := &Service{store: overlay.Entities(store), models: models, gate: gate, wf: DefaultWorkflow{}, groupMax: 10000,
		maxPerRequest: DefaultMaxPerRequest}
	for _, o := range opts {
		o(s)
	}
	if s.joins == nil {
		s.joins = defaultJoins()
	}
	return s
}

// CountEntities is model.EntityCounter: live entities of a model, so the
// model service can refuse unlock and delete while any exist.
func (s *Service) CountEntities(ctx context.Context, tenant string, key storage.ModelKey) (int64, error) {
	return s.store.Count(ctx, tenant, key)
}

// ModelID is a model's deterministic id (UUIDv5, URL namespace, over
// "<name>.<version>"), as in delete-by-model responses.
func ModelID(key storage.ModelKey) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(key.Name+"."+strconv.Itoa(key.Version)))
}

// newTimeID mints a time-based UUID (version 1, docs/decisions/0014-entities.md).
func newTimeID() ([16]byte, error) {
	id, err := uuid.NewUUID()
	if err != nil {
		return id, fmt.Errorf("minting a time-based id: %w", err)
	}
	return id, nil
}

func keyProps(key storage.ModelKey) []apierr.Prop {
	return []apierr.Prop{apierr.P("entityName", key.Name), apierr.P("entityVersion", key.Version)}
}

func modelNotFound(key storage.ModelKey) error {
	return apierr.New(apierr.ModelNotFound, fmt.Sprintf("model %s/%d not found", key.Name, key.Version), keyProps(key)...)
}

// EntityNotFound is the 404 of every read and write by id.
func EntityNotFound(id [16]byte) error {
	s := uuid.UUID(id).String()
	return apierr.New(apierr.EntityNotFound, "entity id="+s+" not found", apierr.P("entityId", s))
}

func badRequest(msg string) error { return apierr.New(apierr.BadRequest, msg) }

// model loads a model or answers MODEL_NOT_FOUND.
func (s *Service) model(ctx context.Context, tenant string, key storage.ModelKey) (*storage.Model, error) {
	// The HTTP guard checks path parameters; the gRPC CRUD names models in
	// its payloads, and PostgreSQL cannot look up a name that is not text.
	if err := jsondoc.TextProblem("parameter", "entityName", key.Name); err != nil {
		return nil, err
	}
	m, err := s.models.GetModel(ctx, tenant, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, modelNotFound(key)
	}
	if err != nil {
		return nil, fmt.Errorf("loading model %s/%d: %w", key.Name, key.Version, err)
	}
	return m, nil
}

// lockedModel is model plus the LOCKED precondition of creates.
func (s *Service) lockedModel(ctx context.Context, tenant string, key storage.ModelKey) (*storage.Model, error) {
	m, err := s.model(ctx, tenant, key)
	if err != nil {
		return nil, err
	}
	if m.State != locked {
		return nil, apierr.New(apierr.ModelNotLocked, fmt.Sprintf("model %s/%d is not locked", key.Name, key.Version),
			append(keyProps(key), apierr.P("expectedState", locked), apierr.P("actualState", m.State))...)
	}
	return m, nil
}

// load returns the latest revision or ENTITY_NOT_FOUND.
func (s *Service) load(ctx context.Context, tenant string, id [16]byte) (*storage.Entity, error) {
	e, err := s.latest(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, EntityNotFound(id)
	}
	return e, err
}

// txIDFor is the id of the transaction a write runs in: the joined one's,
// else a fresh one.
func txIDFor(ctx context.Context) ([16]byte, error) {
	if j := joinedFrom(ctx); j != nil {
		return j.id, nil
	}
	return newTimeID()
}

// AsAPI turns any error into the catalogue error the API shows, for the
// error element of a partially committed request.
func AsAPI(err error) *apierr.Error {
	if e, ok := apierr.As(err); ok {
		return e
	}
	var uv *storage.UniqueViolation
	if errors.As(err, &uv) {
		return uniqueViolation(uv)
	}
	switch {
	case errors.Is(err, storage.ErrConflict):
		return &apierr.Error{Code: apierr.Conflict, Message: "transaction conflict — retry", Retryable: true, Cause: err}
	case errors.Is(err, storage.ErrUnavailable):
		return &apierr.Error{Code: apierr.ServiceUnavailable, Message: "storage is busy; retry the request", Retryable: true, Cause: err}
	}
	return &apierr.Error{Code: apierr.ServerError, Message: "internal error", Cause: err}
}

// itemErr prefixes a per-item failure with its index in the request.
// locateItem is commitCreates' base for a caller that numbers the items
// itself: a refused item's error is an *itemAt.
const locateItem = -2

// itemAt is the error of the item at index (0-based within the call) of
// commitCreates; it unwraps to the item's own error.
type itemAt struct {
	index int
	err   error
}

func (e *itemAt) Error() string { return e.err.Error() }
func (e *itemAt) Unwrap() error { return e.err }

func itemErr(i int, err error) error {
	e, ok := apierr.As(err)
	if !ok {
		return err
	}
	c := *e
	c.Message = "item " + strconv.Itoa(i) + ": " + e.Message
	return &c
}
