// Package changes is the change feed's gRPC door, an svc extension
// (docs/decisions/0035-change-feed-grpc.md): EntityChangeService.Stream,
// one bidirectional stream of CloudEvents per attached subscription, with
// explicit acks and a bounded window of unacknowledged events. It is an
// adapter beside compute/crud on the same gRPC server: it reads the
// subscription with the change feed's durable stream (the one the SSE
// door reads), acknowledges through it, and authenticates callers as the
// CRUD RPCs do (a bearer token in the authorization metadata; ROLE_M2M
// or ROLE_ADMIN; the tenant is the token's).
package changes

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"svc/changefeed"
	"svc/compute"
	cfpb "svc/compute/pb/changefeed"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/iam"
	"svc/platform/apierr"
	"svc/storage"
)

// Options tune the door.
type Options struct {
	// AttachTimeout bounds the wait for the attach message; 0 means 30 s.
	AttachTimeout time.Duration
	// Idle is how long one read of the log waits for new events before
	// it looks again (the stream itself sends nothing while idle: the
	// gRPC keep-alive watches the connection); 0 means 10 s.
	Idle time.Duration
	// Stall bounds how long a stream waits on its consumer: a send the
	// client's flow control holds this long ends the stream (status
	// UNAVAILABLE, SLOW_CONSUMER), and so does a full window with no ack
	// for this long (after a final EntityChangeCutEvent, SLOW_CONSUMER).
	// Either way the stream's goroutines end and a reconnect resumes
	// after the last acknowledged event. 0 means the hub's Stall
	// (SVC_CHANGEFEED_STALL_TIMEOUT, the SSE door's write bound too).
	Stall time.Duration
	Log   *slog.Logger
}

// Server serves EntityChangeService over the node's change-feed hub.
type Server struct {
	cfpb.UnimplementedEntityChangeServiceServer

	hub    *changefeed.Hub
	verify compute.TokenVerifier
	opt    Options

	// windowWaits counts the times a stream stopped sending because its
	// window was full (tests see the window hold from it).
	windowWaits atomic.Int64
	// streams counts attached streams whose sender has not ended; stalls
	// the streams cut because their consumer took nothing within Stall.
	streams atomic.Int64
	stalls  atomic.Int64
}

// New serves the door over hub, authenticating callers with verify.
func New(hub *changefeed.Hub, verify compute.TokenVerifier, opt Options) *Server {
	if opt.AttachTimeout <= 0 {
		opt.AttachTimeout = 30 * time.Second
	}
	if opt.Idle <= 0 {
		opt.Idle = 10 * time.Second
	}
	if opt.Stall <= 0 {
		opt.Stall = hub.Stall()
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	return &Server{hub: hub, verify: verify, opt: opt}
}

// Register adds the service to a gRPC server (compute.Server, before it
// starts).
func (s *Server) Register(r grpc.ServiceRegistrar) { cfpb.RegisterEntityChangeServiceServer(r, s) }

// WindowWaits is how many times a stream found its window full.
func (s *Server) WindowWaits() int64 { return s.windowWaits.Load() }

// Streams is how many attached streams still have a running sender.
func (s *Server) Streams() int64 { return s.streams.Load() }

// Stalls is how many streams were cut because their consumer took no
// message (or sent no ack with the window full) within Options.Stall.
func (s *Server) Stalls() int64 { return s.stalls.Load() }

// authorize: a token that does not verify is Unauthenticated, one with
// neither ROLE_M2M nor ROLE_ADMIN PermissionDenied (the HTTP door's 403).
func (s *Server) authorize(ctx context.Context) (*iam.Principal, error) {
	if s.verify == nil {
		return nil, status.Error(codes.Unauthenticated, "authentication failed")
	}
	p, err := s.verify.VerifyToken(ctx, compute.Bearer(ctx))
	if err != nil || p == nil {
		return nil, status.Error(codes.Unauthenticated, "authentication failed")
	}
	if !p.HasRole(iam.RoleM2M) && !p.HasRole(iam.RoleAdmin) {
		return nil, status.Error(codes.PermissionDenied, "the change feed needs ROLE_M2M or ROLE_ADMIN")
	}
	return p, nil
}

// statusOf is err as a gRPC status: catalogue errors with their code's
// status, anything else Internal.
func statusOf(err error) error {
	if e, ok := apierr.As(err); ok {
		return status.Error(e.Code.GRPCStatus(), e.Error())
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.Internal, err.Error())
}

func invalid(format string, a ...any) error {
	return status.Errorf(codes.InvalidArgument, format, a...)
}

// Stream implements EntityChangeService.Stream.
func (s *Server) Stream(stream cfpb.EntityChangeService_StreamServer) error {
	p, err := s.authorize(stream.Context())
	if err != nil {
		return err
	}
	a, err := s.recvAttach(stream)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(stream.Context())
	d, err := s.hub.AttachDurable(ctx, p.TenantID, a.SubscriptionID, a.ResumeAfter)
	if err != nil {
		cancel(nil)
		return statusOf(err)
	}
	start := d.Cursor()
	ss := &session{s: s, d: d, stream: stream, ctx: ctx, cancel: cancel, window: a.Window, lastSent: start, acked: start, stored: start,
		room: make(chan struct{}, 1), persist: make(chan struct{}, 1), done: make(chan struct{})}
	// The stream is served on its own goroutine, so that this one can end
	// it when a send stays blocked on the client's flow control: only the
	// handler's return ends a gRPC stream, and that return unblocks the
	// send (the transport cancels the stream), after which serve cleans up
	// (last ack stored, durable stream closed) and ends.
	s.streams.Add(1)
	ended := make(chan error, 1)
	go func() {
		defer s.streams.Add(-1)
		ended <- ss.serve(a)
	}()
	return ss.watch(ended)
}

// serve sends the attach response, then runs the stream until it ends,
// and stores the last ack.
func (ss *session) serve(a *Attach) error {
	defer ss.d.Close()
	defer ss.cancel(nil)
	ok, err := wire.New(wire.ServerSource, TypeAttachResponse, Attached{SubscriptionID: a.SubscriptionID, Cursor: ss.lastSent.String(), Window: a.Window})
	if err != nil {
		return statusOf(err)
	}
	if err := ss.send(ok); err != nil {
		return err
	}
	go ss.receive()
	var persisted sync.WaitGroup
	persisted.Add(1)
	go func() {
		defer persisted.Done()
		ss.persistLoop()
	}()
	err = ss.run()
	close(ss.done)
	persisted.Wait()
	ss.flush()
	return err
}

// send sends one message, marking the time the send started so watch can
// see it blocked.
func (ss *session) send(msg *ce.CloudEvent) error {
	ss.sending.Store(time.Now().UnixNano())
	err := ss.stream.Send(msg)
	ss.sending.Store(0)
	return err
}

// watch waits for serve's end; a send blocked for Stall ends the stream
// here instead (UNAVAILABLE, SLOW_CONSUMER: the blocked send cannot carry
// a cut event), which releases the send.
func (ss *session) watch(ended <-chan error) error {
	stall := ss.s.opt.Stall
	t := time.NewTimer(stall)
	defer t.Stop()
	for {
		select {
		case err := <-ended:
			return err
		case <-t.C:
		}
		since := ss.sending.Load()
		if since == 0 {
			t.Reset(stall)
			continue
		}
		if left := time.Duration(since + int64(stall) - time.Now().UnixNano()); left > 0 {
			t.Reset(left)
			continue
		}
		ss.s.stalls.Add(1)
		err := status.Error(codes.Unavailable, changefeed.CutSlowConsumer+": the consumer took no message for "+stall.String()+
			"; attach again to resume after the last acknowledged event")
		ss.cancel(err)
		return err
	}
}

// recvAttach reads the first message, which must be an attach, within
// AttachTimeout.
func (s *Server) recvAttach(stream cfpb.EntityChangeService_StreamServer) (*Attach, error) {
	type recvd struct {
		msg *ce.CloudEvent
		err error
	}
	ch := make(chan recvd, 1)
	go func() {
		msg, err := stream.Recv()
		ch <- recvd{msg, err}
	}()
	timer := time.NewTimer(s.opt.AttachTimeout)
	defer timer.Stop()
	var r recvd
	select {
	case r = <-ch:
	case <-timer.C:
		return nil, status.Errorf(codes.DeadlineExceeded, "no %s within %s", TypeAttachRequest, s.opt.AttachTimeout)
	case <-s.hub.Stopped():
		return nil, status.Error(codes.Unavailable, "the node is shutting down")
	}
	if r.err != nil {
		return nil, r.err
	}
	return parseAttach(r.msg)
}

// parseAttach reads and checks an attach message; every failure is
// InvalidArgument.
func parseAttach(msg *ce.CloudEvent) (*Attach, error) {
	if msg.GetType() != TypeAttachRequest {
		return nil, invalid("the first message must be %s, not %q", TypeAttachRequest, msg.GetType())
	}
	var a Attach
	if err := wire.Decode(msg, &a); err != nil {
		return nil, invalid("%s: %v", TypeAttachRequest, err)
	}
	if a.SubscriptionID == "" {
		return nil, invalid("%s: subscriptionId is required", TypeAttachRequest)
	}
	if a.ResumeAfter != "" {
		if _, err := storage.ParseChangeCursor(a.ResumeAfter); err != nil {
			return nil, invalid("%s: resumeAfter: %v", TypeAttachRequest, err)
		}
	}
	switch {
	case a.Window == 0:
		a.Window = DefaultWindow
	case a.Window < 0 || a.Window > MaxWindow:
		return nil, invalid("%s: window must be in [1, %d]", TypeAttachRequest, MaxWindow)
	}
	return &a, nil
}

// session is one attached stream: the sender (run, on the handler's
// goroutine), the receiver of acks and the persister of acks.
type session struct {
	s      *Server
	d      *changefeed.Durable
	stream cfpb.EntityChangeService_StreamServer
	ctx    context.Context
	cancel context.CancelCauseFunc
	window int

	mu       sync.Mutex
	inflight []storage.ChangeCursor // sent and not acknowledged, in order
	lastSent storage.ChangeCursor
	acked    storage.ChangeCursor // the newest ack
	stored   storage.ChangeCursor // the newest ack stored

	room    chan struct{} // an ack freed room in the window
	persist chan struct{} // an ack to store
	done    chan struct{} // the sender ended

	sending atomic.Int64 // when the send in progress started (Unix ns), 0 when none is
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// receive reads acks until the stream ends; a client that half-closes
// ends the stream (it can no longer acknowledge), a bad message ends it
// InvalidArgument.
func (ss *session) receive() {
	for {
		msg, err := ss.stream.Recv()
		if err != nil {
			ss.cancel(err)
			return
		}
		if err := ss.ack(msg); err != nil {
			ss.cancel(err)
			return
		}
	}
}

// parseAck reads an ack message; every failure is InvalidArgument.
func parseAck(msg *ce.CloudEvent) (storage.ChangeCursor, error) {
	if msg.GetType() != TypeAckRequest {
		return storage.ChangeCursor{}, invalid("expected %s, not %q", TypeAckRequest, msg.GetType())
	}
	var a Ack
	if err := wire.Decode(msg, &a); err != nil {
		return storage.ChangeCursor{}, invalid("%s: %v", TypeAckRequest, err)
	}
	c, err := storage.ParseChangeCursor(a.Cursor)
	if err != nil {
		return storage.ChangeCursor{}, invalid("%s: %v", TypeAckRequest, err)
	}
	return c, nil
}

func (ss *session) ack(msg *ce.CloudEvent) error {
	c, err := parseAck(msg)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.lastSent.Less(c) {
		return invalid("%s: cursor %s is past the last event sent (%s)", TypeAckRequest, c, ss.lastSent)
	}
	if !ss.acked.Less(c) {
		return nil // older than an ack already received
	}
	ss.acked = c
	n := 0
	for n < len(ss.inflight) && !c.Less(ss.inflight[n]) {
		n++
	}
	if n > 0 {
		ss.inflight = ss.inflight[n:]
		signal(ss.room)
	}
	signal(ss.persist)
	return nil
}

// persistLoop stores the newest ack as acks come, one write at a time:
// acks that arrive during a write are stored together by the next.
func (ss *session) persistLoop() {
	for {
		select {
		case <-ss.done:
			return
		case <-ss.persist:
			if err := ss.store(ss.ctx); err != nil && ss.ctx.Err() == nil {
				ss.cancel(statusOf(err))
				return
			}
		}
	}
}

func (ss *session) store(ctx context.Context) error {
	ss.mu.Lock()
	c, stored := ss.acked, ss.stored
	ss.mu.Unlock()
	if !stored.Less(c) {
		return nil
	}
	if err := ss.d.Ack(ctx, c); err != nil {
		return err
	}
	ss.mu.Lock()
	if ss.stored.Less(c) {
		ss.stored = c
	}
	ss.mu.Unlock()
	return nil
}

// flush stores the last acks when the stream ends, whatever ended it.
func (ss *session) flush() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ss.store(ctx); err != nil && !errors.Is(err, context.Canceled) {
		ss.s.opt.Log.Warn("changefeed: storing the last ack of a gRPC stream", "error", err)
	}
}

// free is the room left in the window.
func (ss *session) free() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.window - len(ss.inflight)
}

// sent records c as in flight before its event is sent, so an ack of it
// can never arrive first.
func (ss *session) sent(c storage.ChangeCursor) {
	ss.mu.Lock()
	ss.inflight = append(ss.inflight, c)
	ss.lastSent = c
	ss.mu.Unlock()
}

// run sends the subscription's events in order while the window has
// room, until the client goes, the stream fails or the node stops.
func (ss *session) run() error {
	var pending []changefeed.Event
	var stall *time.Timer // the wait on a full window
	defer func() {
		if stall != nil {
			stall.Stop()
		}
	}()
	for {
		select {
		case <-ss.s.hub.Stopped():
			return ss.cut(changefeed.CutShutdown, "the node is shutting down; reconnect (to any node) and attach again to resume after the last acknowledged event")
		default:
		}
		if len(pending) == 0 {
			evs, err := ss.d.Next(ss.ctx, ss.s.opt.Idle)
			switch {
			case errors.Is(err, changefeed.ErrStopped):
				continue // the check above cuts it
			case errors.Is(err, changefeed.ErrDetached):
				return ss.cut(changefeed.CutBacklog, "the subscription's backlog passed the ceiling (see its detached member); attach again to resume after the last acknowledged event")
			case errors.Is(err, changefeed.ErrGone):
				return ss.cut(changefeed.CutDeleted, "the subscription was deleted")
			case ss.ctx.Err() != nil:
				return ss.ended()
			case err != nil:
				ss.s.opt.Log.Warn("changefeed: gRPC stream stopped", "error", err)
				return ss.cut("ERROR", "reading the change log failed; reconnect and attach again to resume")
			}
			pending = evs
			continue
		}
		free := ss.free()
		if free <= 0 {
			ss.s.windowWaits.Add(1)
			if stall == nil {
				stall = time.NewTimer(ss.s.opt.Stall)
			} else {
				stall.Reset(ss.s.opt.Stall)
			}
			select {
			case <-ss.room:
			case <-ss.ctx.Done():
				return ss.ended()
			case <-ss.s.hub.Stopped():
			case <-stall.C:
				ss.s.stalls.Add(1)
				return ss.cut(changefeed.CutSlowConsumer, "no ack for "+ss.s.opt.Stall.String()+
					" with the window full; attach again to resume after the last acknowledged event")
			}
			stall.Stop()
			continue
		}
		n := min(free, len(pending))
		for i := range n {
			ev := &pending[i]
			msg, err := Encode(ev)
			if err != nil {
				return statusOf(err)
			}
			c, err := storage.ParseChangeCursor(ev.Cursor)
			if err != nil {
				return statusOf(err)
			}
			ss.sent(c)
			if err := ss.send(msg); err != nil {
				return err
			}
		}
		pending = pending[n:]
	}
}

// ended is how the stream ends once its context is done: a client that
// half-closed gets OK, a bad message its status, a client gone away its
// context's.
func (ss *session) ended() error {
	err := context.Cause(ss.ctx)
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil:
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.FromContextError(err).Err()
}

// cut sends the final event of a stream the server ends and ends it
// Unavailable, which clients retry.
func (ss *session) cut(reason, detail string) error {
	if msg, err := wire.New(wire.ServerSource, TypeCut, Cut{Reason: reason, Detail: detail}); err == nil {
		_ = ss.send(msg)
	}
	return status.Error(codes.Unavailable, reason+": "+detail)
}
