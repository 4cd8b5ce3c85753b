// Package member is the compute-member client: it connects to svc's gRPC
// listener, joins with its tags, answers keep-alives and runs processor and
// criteria requests through Go handlers. svc's own member and external Go
// members use it; it reads the SVC_COMPUTE_* settings.
package member

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"svc/compute/pb/cloudapi"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/platform/config"
)

// Config says where to connect and as whom.
type Config struct {
	// Endpoint is svc's gRPC host:port (SVC_COMPUTE_GRPC_ENDPOINT). A
	// comma-separated list names several nodes of a cluster (an
	// extension): Connect dials the first, Run moves round-robin to the
	// next one whenever a stream is lost or a connect fails, so a member
	// whose node died joins a live one.
	Endpoint string
	// Endpoints, when set, is the endpoint list and Endpoint is ignored.
	Endpoints []string
	// HTTPBase is svc's HTTP API base including the context path
	// (SVC_COMPUTE_HTTP_BASE), for callbacks from handlers.
	HTTPBase string
	// Token is the bearer token, carrying ROLE_M2M (SVC_COMPUTE_TOKEN);
	// empty sends none (mock IAM mode).
	Token string
	// Tags are the member's calculation tags.
	Tags []string
	// TenantID, when set, is sent as joinedLegalEntityId.
	TenantID string
	// TLS, when set, dials with TLS; otherwise plaintext.
	TLS *tls.Config
	// JoinTimeout bounds the wait for the greet; 0 means 5 s.
	JoinTimeout time.Duration
	// Source is the CloudEvent source of the member's events.
	Source string
	Log    *slog.Logger
}

// ConfigFrom reads the SVC_COMPUTE_* settings.
func ConfigFrom(c *config.Config, tags ...string) Config {
	cfg := Config{HTTPBase: strings.TrimRight(c.ComputeHTTPBase, "/"), Token: c.ComputeToken, Tags: tags}
	cfg.Endpoints = Config{Endpoint: c.ComputeGRPCEndpoint}.endpoints()
	if len(cfg.Endpoints) > 0 {
		cfg.Endpoint = cfg.Endpoints[0]
	}
	return cfg
}

// endpoints is the endpoint list: Endpoints, else Endpoint split at
// commas, blanks dropped.
func (c Config) endpoints() []string {
	list := c.Endpoints
	if len(list) == 0 {
		list = strings.Split(c.Endpoint, ",")
	}
	var out []string
	for _, e := range list {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// Call is one request the member received, with its dispatch attributes.
type Call struct {
	Type    string
	Request *wire.Request
	// TxToken joins the caller's transaction on callbacks; empty when the
	// dispatch had no transaction.
	TxToken    string
	AuthType   string
	AuthID     string
	AuthClaims string

	httpBase, token string
}

// Callback builds an HTTP request to svc's API (path relative to HTTPBase)
// that joins the dispatching transaction through X-Tx-Token.
func (c *Call) Callback(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	if c.httpBase == "" {
		return nil, errors.New("member: no HTTPBase configured for callbacks")
	}
	r, err := http.NewRequestWithContext(ctx, method, c.httpBase+"/"+strings.TrimLeft(path, "/"), body)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		r.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.TxToken != "" {
		r.Header.Set("X-Tx-Token", c.TxToken)
	}
	r.Header.Set("Content-Type", "application/json")
	return r, nil
}

// CallbackContext returns ctx carrying what a callback over svc's gRPC
// CRUD RPCs needs: the member's bearer token and, when the dispatch had a
// transaction, its token as tx-token metadata, so the call joins it.
func (c *Call) CallbackContext(ctx context.Context) context.Context {
	var kv []string
	if c.token != "" {
		kv = append(kv, wire.MetadataAuthorization, "Bearer "+c.token)
	}
	if c.TxToken != "" {
		kv = append(kv, wire.MetadataTxToken, c.TxToken)
	}
	if len(kv) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// Handlers run the member's work. A nil handler answers with failure.
type Handlers struct {
	// Processor returns the entity's new data (nil keeps it) or an error,
	// which is reported as success:false with its message.
	Processor func(ctx context.Context, call *Call) (json.RawMessage, error)
	// Criteria returns whether the entity matches, with an optional reason.
	Criteria func(ctx context.Context, call *Call) (matches bool, reason string, err error)
	// Function computes a scheduled transition's fire time: resultKind
	// "Schedule" with {fireAt|fireAfterMs, [expireAt|expireAfterMs]}.
	Function func(ctx context.Context, call *Call) (resultKind string, result json.RawMessage, err error)
}

// Member is one connected compute member.
type Member struct {
	cfg    Config
	h      Handlers
	conn   *grpc.ClientConn
	stream grpc.BidiStreamingClient[ce.CloudEvent, ce.CloudEvent]
	cancel context.CancelFunc
	id     string
	// endpoint is the host:port this connection dialled.
	endpoint string

	sendMu sync.Mutex
	// wg tracks the receive loop and every handler goroutine.
	wg      sync.WaitGroup
	done    chan struct{}
	errOnce sync.Once
	err     error
}

// Connect dials svc (the first endpoint of a list), joins and waits for
// the greet. The member then runs until Close or until the stream ends
// (see Done and Err).
func Connect(ctx context.Context, cfg Config, h Handlers) (*Member, error) {
	eps := cfg.endpoints()
	if len(eps) == 0 {
		return nil, errors.New("member: no endpoint (SVC_COMPUTE_GRPC_ENDPOINT)")
	}
	cfg.Endpoint, cfg.Endpoints = eps[0], nil
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = 5 * time.Second
	}
	if cfg.Source == "" {
		cfg.Source = "urn:svc:calculation-member"
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	creds := insecure.NewCredentials()
	if cfg.TLS != nil {
		creds = credentials.NewTLS(cfg.TLS)
	}
	conn, err := grpc.NewClient(cfg.Endpoint, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(wire.DefaultMaxRecvMsgBytes)))
	if err != nil {
		return nil, fmt.Errorf("member: dial %s: %w", cfg.Endpoint, err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	if cfg.Token != "" {
		sctx = metadata.AppendToOutgoingContext(sctx, wire.MetadataAuthorization, "Bearer "+cfg.Token)
	}
	stream, err := cloudapi.NewCloudEventsServiceClient(conn).StartStreaming(sctx)
	if err != nil {
		cancel()
		conn.Close()
		return nil, fmt.Errorf("member: start streaming: %w", err)
	}
	m := &Member{cfg: cfg, h: h, conn: conn, stream: stream, cancel: cancel, endpoint: cfg.Endpoint, done: make(chan struct{})}
	if err := m.join(ctx); err != nil {
		cancel()
		conn.Close()
		return nil, err
	}
	m.wg.Add(1)
	go m.loop(sctx)
	return m, nil
}

func (m *Member) join(ctx context.Context) error {
	// io.EOF from Send means the server already ended the stream (a
	// refused token, say); gRPC hands the real status to Recv, below.
	if err := m.send(wire.TypeJoin, wire.Join{ID: uuid.NewString(), Tags: m.cfg.Tags, JoinedLegalEntityID: m.cfg.TenantID}, nil); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("member: send join: %w", err)
	}
	type result struct {
		ev  *ce.CloudEvent
		err error
	}
	got := make(chan result, 1)
	go func() { // ends with Recv: at the greet, or when Connect cancels the stream
		ev, err := m.stream.Recv()
		got <- result{ev, err}
	}()
	timer := time.NewTimer(m.cfg.JoinTimeout)
	defer timer.Stop()
	select {
	case r := <-got:
		if r.err != nil {
			return fmt.Errorf("member: join: %w", r.err)
		}
		if r.ev.GetType() != wire.TypeGreet {
			return fmt.Errorf("member: join answered with %s, want %s", r.ev.GetType(), wire.TypeGreet)
		}
		var g wire.Greet
		if err := wire.Decode(r.ev, &g); err != nil {
			return fmt.Errorf("member: greet: %w", err)
		}
		m.id = g.MemberID
		return nil
	case <-timer.C:
		return errors.New("member: no greet within the join timeout")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ID is the member id svc assigned in the greet.
func (m *Member) ID() string { return m.id }

// Endpoint is the host:port this connection joined through.
func (m *Member) Endpoint() string { return m.endpoint }

// Done is closed when the member's stream has ended.
func (m *Member) Done() <-chan struct{} { return m.done }

// Err is why the stream ended (nil after Close).
func (m *Member) Err() error {
	<-m.done
	return m.err
}

// Close ends the stream and waits for the receive loop and handlers.
func (m *Member) Close() error {
	m.sendMu.Lock()
	_ = m.stream.CloseSend()
	m.sendMu.Unlock()
	m.cancel()
	m.wg.Wait()
	return m.conn.Close()
}

func (m *Member) fail(err error) {
	m.errOnce.Do(func() {
		if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
			err = nil
		}
		m.err = err
		close(m.done)
	})
}

func (m *Member) loop(ctx context.Context) {
	defer m.wg.Done()
	for {
		ev, err := m.stream.Recv()
		if err != nil {
			if ctx.Err() != nil {
				err = nil
			}
			m.fail(err)
			return
		}
		switch ev.GetType() {
		case wire.TypeKeepAlive:
			var ka wire.KeepAlive
			_ = wire.Decode(ev, &ka)
			if err := m.send(wire.TypeAck, wire.Ack{ID: uuid.NewString(), SourceEventID: ka.ID, Success: true}, nil); err != nil {
				m.cfg.Log.Warn("member: keep-alive ack failed", "error", err)
			}
		case wire.TypeProcessorRequest, wire.TypeCriteriaRequest, wire.TypeFunctionRequest:
			call := &Call{Type: ev.GetType(), httpBase: m.cfg.HTTPBase, token: m.cfg.Token,
				TxToken: attr(ev, wire.AttrTxToken), AuthType: attr(ev, wire.AttrAuthType),
				AuthID: attr(ev, wire.AttrAuthID), AuthClaims: attr(ev, wire.AttrAuthClaims)}
			var req wire.Request
			if err := wire.Decode(ev, &req); err != nil {
				m.cfg.Log.Warn("member: malformed request", "type", ev.GetType(), "error", err)
				continue
			}
			call.Request = &req
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				m.handle(ctx, call)
			}()
		}
	}
}

func attr(ev *ce.CloudEvent, name string) string {
	return ev.GetAttributes()[name].GetCeString()
}

func (m *Member) handle(ctx context.Context, call *Call) {
	req := call.Request
	resp := wire.Response{ID: uuid.NewString(), RequestID: req.RequestID, EntityID: req.EntityID}
	ok := false
	var err error
	typ := wire.TypeProcessorResponse
	switch call.Type {
	case wire.TypeProcessorRequest:
		if m.h.Processor == nil {
			err = errors.New("no processor handler")
			break
		}
		var data json.RawMessage
		if data, err = m.h.Processor(ctx, call); err == nil {
			ok = true
			if data != nil {
				resp.Payload = &wire.Payload{Type: "JSON", Data: data}
			}
		}
	case wire.TypeCriteriaRequest:
		typ = wire.TypeCriteriaResponse
		if m.h.Criteria == nil {
			err = errors.New("no criteria handler")
			break
		}
		var matches bool
		if matches, resp.Reason, err = m.h.Criteria(ctx, call); err == nil {
			ok = true
			resp.Matches = &matches
		}
	case wire.TypeFunctionRequest:
		typ = wire.TypeFunctionResponse
		if m.h.Function == nil {
			err = errors.New("no function handler")
			break
		}
		if resp.ResultKind, resp.Result, err = m.h.Function(ctx, call); err == nil {
			ok = true
		}
	}
	resp.Success = &ok
	if err != nil {
		resp.Error = &wire.Error{Code: "MEMBER_ERROR", Message: err.Error()}
	}
	if err := m.send(typ, resp, nil); err != nil {
		m.cfg.Log.Warn("member: response not sent", "requestId", req.RequestID, "error", err)
	}
}

// send writes one event; gRPC allows one sender at a time.
func (m *Member) send(typ string, v any, attrs map[string]*ce.CloudEvent_CloudEventAttributeValue) error {
	ev, err := wire.New(m.cfg.Source, typ, v)
	if err != nil {
		return err
	}
	ev.Attributes = attrs
	m.sendMu.Lock()
	defer m.sendMu.Unlock()
	return m.stream.Send(ev)
}
