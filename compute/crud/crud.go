// Package crud is the gRPC adapter of svc's CRUD RPCs (entityManage,
// entitySearch, entityModelManage and their collection forms): it decodes
// CloudEvents payloads into the domain services' typed requests and
// encodes their results (docs/ARCHITECTURE.md, compute). The member
// protocol (startStreaming) is compute's; compute.Server hands the CRUD
// RPCs of the one CloudEventsService to a Server of this package.
package crud

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"svc/compute"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/entity"
	"svc/iam"
	"svc/platform/apierr"
	"svc/storage"
)

// The CRUD RPCs. Requests are routed by CloudEvent type, not by RPC
// (docs/decisions/0019-compute-members.md): an entity type is served on any of the four
// entity RPCs, a type that answers with several events only on the two
// streaming ones, and model types on entityModelManage.
const (
	rpcEntityManage           = "entityManage"
	rpcEntityManageCollection = "entityManageCollection"
	rpcEntitySearch           = "entitySearch"
	rpcEntitySearchCollection = "entitySearchCollection"
	rpcModelManage            = "entityModelManage"
)

// nilUUID fills the id fields of a failure response that has none.
const nilUUID = "00000000-0000-0000-0000-000000000000"

// Server serves the CRUD RPCs over the domain services.
type Server struct {
	svc    Services
	verify compute.TokenVerifier
	log    *slog.Logger
	// entity and model map each request type to its handler.
	entity, model map[string]crudHandler
}

// New serves the CRUD RPCs over svc, authenticating callers with verify
// as compute's member streams are. A nil service makes its RPCs answer
// Unimplemented.
func New(svc Services, verify compute.TokenVerifier, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	return &Server{svc: svc, verify: verify, log: log, entity: entityHandlers(), model: modelHandlers()}
}

// crudCall is one CRUD request being served.
type crudCall struct {
	s   *Server
	ctx context.Context
	p   *iam.Principal
	rpc string
	// id is the request's CloudEvent id: the id and requestId of every
	// response to it.
	id   string
	req  *wire.CrudRequest
	mreq *wire.ModelRequest
	send func(*ce.CloudEvent) error
}

// crudHandler serves one request type. stream marks the types that may
// answer with more than one event.
type crudHandler struct {
	serve  func(c *crudCall) error
	stream bool
}

// EntityManage implements the unary entityManage RPC.
func (s *Server) EntityManage(ctx context.Context, ev *ce.CloudEvent) (*ce.CloudEvent, error) {
	return s.unary(ctx, ev, rpcEntityManage)
}

// EntitySearch implements the unary entitySearch RPC.
func (s *Server) EntitySearch(ctx context.Context, ev *ce.CloudEvent) (*ce.CloudEvent, error) {
	return s.unary(ctx, ev, rpcEntitySearch)
}

// EntityModelManage implements the unary entityModelManage RPC.
func (s *Server) EntityModelManage(ctx context.Context, ev *ce.CloudEvent) (*ce.CloudEvent, error) {
	return s.unary(ctx, ev, rpcModelManage)
}

// EntityManageCollection implements the server-streaming
// entityManageCollection RPC.
func (s *Server) EntityManageCollection(ev *ce.CloudEvent, stream grpc.ServerStreamingServer[ce.CloudEvent]) error {
	return s.serveCrud(stream.Context(), ev, rpcEntityManageCollection, stream.Send)
}

// EntitySearchCollection implements the server-streaming
// entitySearchCollection RPC; results are sent as they are encoded.
func (s *Server) EntitySearchCollection(ev *ce.CloudEvent, stream grpc.ServerStreamingServer[ce.CloudEvent]) error {
	return s.serveCrud(stream.Context(), ev, rpcEntitySearchCollection, stream.Send)
}

func (s *Server) unary(ctx context.Context, ev *ce.CloudEvent, rpc string) (*ce.CloudEvent, error) {
	var out *ce.CloudEvent
	err := s.serveCrud(ctx, ev, rpc, func(e *ce.CloudEvent) error {
		if out != nil {
			return status.Error(codes.Internal, "more than one response to a unary call")
		}
		out = e
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, status.Error(codes.Internal, "no response")
	}
	return out, nil
}

// authorize authenticates the caller like startStreaming does: a token
// that does not verify is Unauthenticated, one without ROLE_M2M is
// PermissionDenied. The caller acts in its token's tenant.
func (s *Server) authorize(ctx context.Context) (*iam.Principal, error) {
	if s.verify == nil {
		return nil, status.Error(codes.Unauthenticated, "authentication failed")
	}
	p, err := s.verify.VerifyToken(ctx, compute.Bearer(ctx))
	if err != nil || p == nil {
		return nil, status.Error(codes.Unauthenticated, "authentication failed")
	}
	if !p.HasRole(iam.RoleM2M) {
		return nil, status.Error(codes.PermissionDenied, "ROLE_M2M required")
	}
	return p, nil
}

// errJoinUnsupported answers a request carrying tx-token metadata when
// the entity service cannot join transactions: running the request
// outside the transaction instead would silently break the caller's
// isolation.
var errJoinUnsupported = status.Error(codes.Unimplemented,
	"joining a transaction (tx-token metadata) is not supported by this server; send the request without tx-token")

// Joiner is the entity service's transaction joining (docs/decisions/0015-transactions.md);
// *entity.Service satisfies it.
type Joiner interface {
	JoinTx(tenant, token string) (*entity.OpenTx, error)
}

func txToken(ctx context.Context) string {
	for _, v := range metadata.ValueFromIncomingContext(ctx, wire.MetadataTxToken) {
		if v != "" {
			return v
		}
	}
	return ""
}

// join puts the request into the transaction its tx-token names; a token
// error is answered in the failure shape of the request's type, as any
// domain failure.
func (c *crudCall) join(typ string) (joined bool, err error) {
	tok := txToken(c.ctx)
	if tok == "" {
		return false, nil
	}
	j, ok := c.s.svc.Entities.(Joiner)
	if !ok {
		return false, errJoinUnsupported
	}
	o, jerr := j.JoinTx(c.p.TenantID, tok)
	if jerr != nil {
		return true, c.joinFailed(typ, jerr)
	}
	c.ctx = entity.WithJoined(c.ctx, o)
	return false, nil
}

// joinFailed answers a token error as the request type's failure response.
func (c *crudCall) joinFailed(typ string, err error) error {
	switch typ {
	case wire.TypeEntityCreateRequest, wire.TypeEntityCreateCollectionRequest, wire.TypeEntityUpdateRequest,
		wire.TypeEntityUpdateCollectionRequest, wire.TypeEntityPatchRequest:
		return c.txFailed(err)
	case wire.TypeEntityDeleteRequest:
		return c.emit(wire.TypeEntityDeleteResponse, &wire.DeleteResponse{Base: c.failed(err), RequestID: c.id,
			EntityID: c.req.EntityID, TransactionID: nilUUID})
	case wire.TypeEntityDeleteAllRequest:
		return c.emit(wire.TypeEntityDeleteAllResponse, &wire.DeleteAllResponse{Base: c.failed(err), RequestID: c.id,
			ModelID: nilUUID, EntityIDs: []string{}})
	case wire.TypeEntityTransitionRequest:
		return c.emit(wire.TypeEntityTransitionResponse, &wire.TransitionResponse{Base: c.failed(err)})
	case wire.TypeEntitySnapshotSearchRequest, wire.TypeSnapshotGetStatusRequest, wire.TypeSnapshotCancelRequest,
		wire.TypeSnapshotGetRequest:
		return c.snapshotFailed(err)
	}
	return c.entityFailed(err)
}

func (s *Server) serveCrud(ctx context.Context, ev *ce.CloudEvent, rpc string, send func(*ce.CloudEvent) error) error {
	p, err := s.authorize(ctx)
	if err != nil {
		return err
	}
	c := &crudCall{s: s, ctx: ctx, p: p, rpc: rpc, send: send}
	var h crudHandler
	var ok bool
	if rpc == rpcModelManage {
		if s.svc.Models == nil {
			return status.Error(codes.Unimplemented, "model management is not available on this server")
		}
		h, ok = s.model[ev.GetType()]
		if !ok {
			return status.Errorf(codes.InvalidArgument, "unsupported model event type: %q", ev.GetType())
		}
		if c.mreq, err = ParseModelRequest(ev); err != nil {
			return err
		}
	} else {
		if s.svc.Entities == nil || s.svc.Search == nil {
			return status.Error(codes.Unimplemented, "entity operations are not available on this server")
		}
		h, ok = s.entity[ev.GetType()]
		if !ok {
			return status.Errorf(codes.InvalidArgument, "unsupported entity event type: %q", ev.GetType())
		}
		if h.stream && rpc != rpcEntityManageCollection && rpc != rpcEntitySearchCollection {
			return status.Errorf(codes.InvalidArgument, "%s answers with a stream; call entitySearchCollection", ev.GetType())
		}
		if c.req, err = ParseCrudRequest(ev); err != nil {
			return err
		}
	}
	c.id = ev.GetId()
	if c.id == "" && c.req != nil {
		c.id = c.req.ID
	} else if c.id == "" && c.mreq != nil {
		c.id = c.mreq.ID
	}
	if c.req != nil {
		if answered, err := c.join(ev.GetType()); answered || err != nil {
			return err
		}
	}
	return h.serve(c)
}

// ParseCrudRequest reads the JSON payload of an entity or search request.
// A payload that is not a JSON object is InvalidArgument; the fields each
// type needs are checked by its handler.
func ParseCrudRequest(ev *ce.CloudEvent) (*wire.CrudRequest, error) {
	b, err := payloadObject(ev)
	if err != nil {
		return nil, err
	}
	var r wire.CrudRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, invalid("invalid payload: %v", err)
	}
	return &r, nil
}

// ParseModelRequest reads the JSON payload of a model request.
func ParseModelRequest(ev *ce.CloudEvent) (*wire.ModelRequest, error) {
	b, err := payloadObject(ev)
	if err != nil {
		return nil, err
	}
	var r wire.ModelRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, invalid("invalid payload: %v", err)
	}
	return &r, nil
}

func payloadObject(ev *ce.CloudEvent) ([]byte, error) {
	b, err := wire.Data(ev)
	if err != nil {
		return nil, invalid("invalid CloudEvent: %v", err)
	}
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, invalid("invalid payload: not a JSON object")
	}
	return b, nil
}

func invalid(format string, a ...any) error {
	return status.Errorf(codes.InvalidArgument, format, a...)
}

func (c *crudCall) actor() entity.Actor {
	return entity.Actor{Tenant: c.p.TenantID, User: c.p.UserID, Kind: c.p.Kind}
}

// emit sends v as a server event of type typ.
func (c *crudCall) emit(typ string, v any) error {
	ev, err := wire.New(wire.ServerSource, typ, v)
	if err != nil {
		return status.Errorf(codes.Internal, "encoding %s: %v", typ, err)
	}
	return c.send(ev)
}

func (c *crudCall) ok() wire.Base { return wire.Base{ID: c.id, Success: true} }

func (c *crudCall) failed(err error) wire.Base {
	return wire.Base{ID: c.id, Error: c.s.apiError(err)}
}

// apiError is a domain failure as the CRUD responses carry it (docs/decisions/0019-compute-members.md):
// code CLIENT_ERROR or SERVER_ERROR as the catalogue's HTTP status of the
// code is 4xx or 5xx (so both doors agree), the catalogue code as the
// message prefix. A 5xx catalogue error keeps its client-facing message, as the
// HTTP problem detail does; an internal error shows only a ticket, and its
// cause goes to the log under that ticket.
func (s *Server) apiError(err error) *wire.Error {
	e := entity.AsAPI(err)
	retry := e.IsRetryable()
	if e.Code.HTTPStatus() < 500 {
		return &wire.Error{Code: "CLIENT_ERROR", Message: e.Code.String() + ": " + e.Message, Retryable: retry}
	}
	if e.Code != apierr.ServerError {
		if e.Cause != nil {
			s.log.Warn("grpc request failed", "code", e.Code, "error", e.Cause)
		}
		return &wire.Error{Code: "SERVER_ERROR", Message: e.Code.String() + ": " + e.Message, Retryable: retry}
	}
	ticket := uuid.NewString()
	cause := error(e)
	if e.Cause != nil {
		cause = e.Cause
	}
	s.log.Error("grpc request failed", "ticket", ticket, "error", cause)
	return &wire.Error{Code: "SERVER_ERROR", Message: "SERVER_ERROR: internal error [ticket: " + ticket + "]", Retryable: retry}
}

// Field readers: a missing or malformed field is InvalidArgument.

func (c *crudCall) modelKey(m *wire.ModelSpec) (storage.ModelKey, error) {
	if m == nil || m.Name == "" {
		return storage.ModelKey{}, invalid("model with name and version is required")
	}
	return storage.ModelKey{Name: m.Name, Version: m.Version}, nil
}

func parseID(field, v string) ([16]byte, error) {
	if v == "" {
		return [16]byte{}, invalid("%s is required", field)
	}
	id, err := uuid.Parse(v)
	if err != nil {
		return [16]byte{}, invalid("%s is not a UUID: %q", field, v)
	}
	return id, nil
}

func (c *crudCall) pointInTime() (*time.Time, error) {
	if c.req.PointInTime == nil || *c.req.PointInTime == "" {
		return nil, nil
	}
	t, ok := entity.ParseInstant(*c.req.PointInTime)
	if !ok {
		return nil, invalid("pointInTime is not an ISO-8601 date-time: %q", *c.req.PointInTime)
	}
	return &t, nil
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func ids(in [][16]byte) []string {
	out := make([]string, len(in))
	for i, id := range in {
		out[i] = uuid.UUID(id).String()
	}
	return out
}

// itemError prefixes a collection item's failure with its index.
func itemError(i int, err error) error {
	e, ok := apierr.As(err)
	if !ok {
		return err
	}
	cp := *e
	cp.Message = "item " + strconv.Itoa(i) + ": " + e.Message
	return &cp
}
