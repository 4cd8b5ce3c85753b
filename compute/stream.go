package compute

import (
	"errors"
	"io"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/iam"
)

// StartStreaming is a member's session: authenticate, join, greet, then
// route responses, refresh liveness on every message, ping every interval
// and evict on silence.
func (s *Server) StartStreaming(stream grpc.BidiStreamingServer[ce.CloudEvent, ce.CloudEvent]) error {
	ctx := stream.Context()
	if s.verify == nil { // no verifier wired: nobody can join
		return status.Error(codes.Unauthenticated, "authentication failed")
	}
	p, err := s.verify.VerifyToken(ctx, Bearer(ctx))
	if err != nil || p == nil {
		return status.Error(codes.Unauthenticated, "authentication failed")
	}
	if !p.HasRole(iam.RoleM2M) {
		return status.Error(codes.PermissionDenied, "ROLE_M2M required for streaming")
	}

	// The receiver goroutine ends when Recv fails, which it does once this
	// handler returns and gRPC cancels the stream.
	in := make(chan *ce.CloudEvent)
	recvErr := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			ev, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case in <- ev:
			case <-done:
				return
			}
		}
	}()

	m, err := s.join(stream, p, in, recvErr)
	if err != nil {
		return err
	}
	s.reg.add(m)
	s.tagsChanged(m.tenant)
	defer func() {
		s.reg.remove(m)
		close(m.done)
		s.tagsChanged(m.tenant)
		s.log.Info("compute member left", "memberId", m.id, "tenant", m.tenant)
	}()
	if err := greet(stream, m); err != nil {
		return err
	}
	if testHookAfterGreet != nil {
		testHookAfterGreet()
	}
	s.log.Info("compute member joined", "memberId", m.id, "tenant", m.tenant, "tags", m.tags)

	sendErr := make(chan error, 1)
	s.wg.Add(1)
	go s.sender(stream, m, done, sendErr)

	tick := time.NewTicker(s.cfg.KeepaliveInterval)
	defer tick.Stop()
	for {
		select {
		case ev := <-in:
			m.touch() // any message proves liveness, not only keep-alives
			s.inbound(m, ev)
		case err := <-recvErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case err := <-sendErr:
			return err
		case <-tick.C:
			// A message already waiting counts before silence is judged:
			// when this loop was held up, select picks among ready cases at
			// random, so the tick could otherwise evict a member whose
			// message arrived in time and was only not taken yet.
			select {
			case ev := <-in:
				m.touch()
				s.inbound(m, ev)
				continue
			default:
			}
			now := time.Now().UnixNano()
			if now-m.lastSeen.Load() > int64(s.cfg.KeepaliveTimeout) {
				return status.Error(codes.DeadlineExceeded, "keep-alive timeout")
			}
			if since := m.sendingSince.Load(); since != 0 && now-since > int64(s.cfg.KeepaliveTimeout) {
				return status.Error(codes.DeadlineExceeded, "keep-alive timeout: send stalled")
			}
			ka, _ := wire.New(wire.ServerSource, wire.TypeKeepAlive, wire.KeepAlive{ID: m.id, MemberID: m.id, Success: true})
			select {
			case m.out <- outbound{ev: ka}:
			default: // the queue is full, so the member is busy; skip this ping
			}
		case <-s.stopping:
			return status.Error(codes.Unavailable, "server stopping")
		}
	}
}

// join reads and checks the first message.
func (s *Server) join(stream grpc.BidiStreamingServer[ce.CloudEvent, ce.CloudEvent], p *iam.Principal, in <-chan *ce.CloudEvent, recvErr <-chan error) (*memberConn, error) {
	timer := time.NewTimer(s.cfg.KeepaliveTimeout)
	defer timer.Stop()
	var ev *ce.CloudEvent
	select {
	case ev = <-in:
	case err := <-recvErr:
		if errors.Is(err, io.EOF) {
			return nil, status.Error(codes.InvalidArgument, "stream closed before CalculationMemberJoinEvent")
		}
		return nil, err
	case <-timer.C:
		return nil, status.Error(codes.DeadlineExceeded, "no CalculationMemberJoinEvent within the keep-alive timeout")
	case <-s.stopping:
		return nil, status.Error(codes.Unavailable, "server stopping")
	}
	if ev.GetType() != wire.TypeJoin {
		return nil, status.Errorf(codes.InvalidArgument, "first message must be CalculationMemberJoinEvent, got %s", ev.GetType())
	}
	var j wire.Join
	if err := wire.Decode(ev, &j); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "invalid CalculationMemberJoinEvent payload: %v", err)
	}
	// A join without id is accepted (client templates send none).
	if j.JoinedLegalEntityID != "" && j.JoinedLegalEntityID != p.TenantID {
		return nil, status.Error(codes.PermissionDenied, "tenant mismatch")
	}
	return newMember(uuid.NewString(), p.TenantID, append([]string(nil), j.Tags...)), nil
}

// testHookAfterGreet, when set by a test, runs right after the greet is
// sent: it widens the window in which a greeted member must already be
// dispatchable.
var testHookAfterGreet func()

// greet answers the join. It runs after the member is registered: a member
// that has its greet can be dispatched to at once (a dispatch in between
// waits in the member's queue, and the sender starts only after the greet,
// so the greet still goes first).
func greet(stream grpc.BidiStreamingServer[ce.CloudEvent, ce.CloudEvent], m *memberConn) error {
	ev, err := wire.New(wire.ServerSource, wire.TypeGreet, wire.Greet{ID: m.id, MemberID: m.id, JoinedLegalEntityID: m.tenant, Success: true})
	if err != nil {
		return err
	}
	return stream.Send(ev)
}

// sender owns stream.Send (gRPC allows one sender at a time). A failed send
// fails its pending call and ends the stream.
func (s *Server) sender(stream grpc.BidiStreamingServer[ce.CloudEvent, ce.CloudEvent], m *memberConn, done <-chan struct{}, sendErr chan<- error) {
	defer s.wg.Done()
	for {
		select {
		case o := <-m.out:
			m.sendingSince.Store(time.Now().UnixNano())
			err := stream.Send(o.ev)
			m.sendingSince.Store(0)
			if err != nil {
				if o.requestID != "" {
					m.complete(o.requestID, reply{err: err})
				}
				sendErr <- err
				return
			}
		case <-done:
			return
		}
	}
}

// inbound handles one message after the join.
func (s *Server) inbound(m *memberConn, ev *ce.CloudEvent) {
	switch ev.GetType() {
	case wire.TypeKeepAlive, wire.TypeAck:
		// Liveness only; never echoed, to avoid a ping-pong storm.
	case wire.TypeProcessorResponse, wire.TypeCriteriaResponse, wire.TypeFunctionResponse:
		var r wire.Response
		if err := wire.Decode(ev, &r); err != nil {
			s.log.Warn("compute member sent a malformed response", "memberId", m.id, "type", ev.GetType(), "error", err)
			return
		}
		if !m.complete(r.RequestID, reply{resp: &r}) {
			s.log.Debug("response for an unknown or expired request dropped", "memberId", m.id, "requestId", r.RequestID)
		}
	case wire.TypeJoin:
		s.log.Warn("second CalculationMemberJoinEvent ignored", "memberId", m.id)
	default:
		s.log.Debug("unknown event type ignored", "memberId", m.id, "type", ev.GetType())
	}
}
