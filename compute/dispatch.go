package compute

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"svc/cluster"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/platform/apierr"
	"svc/workflow"
)

var (
	_ workflow.ProcessorDispatcher = (*Server)(nil)
	_ workflow.FunctionDispatcher  = (*Server)(nil)
)

// DispatchProcessor sends an EntityProcessorCalculationRequest to a member
// serving the processor's tags and waits for its response.
func (s *Server) DispatchProcessor(ctx context.Context, call *workflow.ProcessorCall) (*workflow.ProcessorResult, error) {
	req := request(&call.Call)
	req.ProcessorID, req.ProcessorName = call.Processor, call.Processor
	resp, err := s.roundTrip(ctx, &call.Call, wire.TypeProcessorRequest, req, "processor "+call.Processor)
	if err != nil {
		return nil, err
	}
	res := &workflow.ProcessorResult{Success: resp.Success != nil && *resp.Success, Warnings: resp.Warnings}
	if resp.Payload != nil {
		res.Data = resp.Payload.Data
	}
	if resp.Error != nil {
		res.Error = &workflow.MemberError{Code: resp.Error.Code, Message: resp.Error.Message, Retryable: resp.Error.Retryable}
	}
	return res, nil
}

// DispatchCriteria sends an EntityCriteriaCalculationRequest and waits for
// the member's verdict. A missing matches counts as false.
func (s *Server) DispatchCriteria(ctx context.Context, call *workflow.CriteriaCall) (*workflow.CriteriaResult, error) {
	req := request(&call.Call)
	req.CriteriaID, req.CriteriaName, req.Target = call.Criteria, call.Criteria, call.Target
	resp, err := s.roundTrip(ctx, &call.Call, wire.TypeCriteriaRequest, req, "criteria "+call.Criteria)
	if err != nil {
		return nil, err
	}
	res := &workflow.CriteriaResult{Success: resp.Success != nil && *resp.Success,
		Matches: resp.Matches != nil && *resp.Matches, Reason: resp.Reason, Warnings: resp.Warnings}
	if resp.Error != nil {
		res.Error = &workflow.MemberError{Code: resp.Error.Code, Message: resp.Error.Message, Retryable: resp.Error.Retryable}
	}
	return res, nil
}

// DispatchFunction sends an EntityFunctionCalculationRequest (a scheduled
// transition's fire-time function) and waits for its result.
func (s *Server) DispatchFunction(ctx context.Context, call *workflow.FunctionCall) (*workflow.FunctionResult, error) {
	req := request(&call.Call)
	req.FunctionID, req.FunctionName = call.Function, call.Function
	resp, err := s.roundTrip(ctx, &call.Call, wire.TypeFunctionRequest, req, "function "+call.Function)
	if err != nil {
		return nil, err
	}
	res := &workflow.FunctionResult{Success: resp.Success != nil && *resp.Success,
		ResultKind: resp.ResultKind, Result: resp.Result, Warnings: resp.Warnings}
	if resp.Error != nil {
		res.Error = &workflow.MemberError{Code: resp.Error.Code, Message: resp.Error.Message, Retryable: resp.Error.Retryable}
	}
	return res, nil
}

// request builds the payload common to processor and criteria requests.
func request(c *workflow.Call) *wire.Request {
	r := &wire.Request{
		EntityID:      c.Meta.ID,
		Workflow:      wire.Ref{ID: c.Workflow, Name: c.Workflow},
		Transition:    wire.TransitionRef{ID: c.Transition, Name: c.Transition, StateFrom: c.StateFrom, StateTo: c.StateTo},
		TransactionID: c.TransactionID,
		Success:       true,
		Parameters:    c.Parameters,
	}
	if c.Data != nil {
		r.Payload = &wire.Payload{Type: "JSON", Data: c.Data, Meta: &wire.EntityMeta{
			ID: c.Meta.ID, ModelKey: wire.ModelKey{Name: c.Meta.ModelName, Version: c.Meta.ModelVersion},
			State: c.Meta.State, CreationDate: stamp(c.Meta.CreationDate), LastUpdateTime: stamp(c.Meta.LastUpdateTime),
			TransactionID: c.Meta.TransactionID,
		}}
	}
	return r
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// roundTrip routes one request to a member (here, or on a peer in
// cluster mode) and waits for the response under the call's timeout.
func (s *Server) roundTrip(ctx context.Context, c *workflow.Call, typ string, req *wire.Request, what string) (*wire.Response, error) {
	return s.exchange(ctx, c, typ, req, what, false)
}

// exchange is roundTrip; localOnly (a forwarded call) uses this node's
// members only and does not wait for one to join.
func (s *Server) exchange(ctx context.Context, c *workflow.Call, typ string, req *wire.Request, what string, localOnly bool) (*wire.Response, error) {
	attrs, err := attributes(c)
	if err != nil {
		return nil, err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = workflow.DefaultResponseTimeoutMs * time.Millisecond
	}
	m, node, err := s.memberFor(ctx, c.Tenant, c.Tags, c.TagsCSV, localOnly)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return s.forward(ctx, node, c, typ, req, what, timeout)
	}
	rid, err := uuid.NewUUID() // a time UUID (docs/decisions/0019-compute-members.md)
	if err != nil {
		return nil, fmt.Errorf("compute: request id: %w", err)
	}
	req.ID, req.RequestID = rid.String(), rid.String()
	ev, err := wire.NewWithID(req.RequestID, wire.ServerSource, typ, req)
	if err != nil {
		return nil, fmt.Errorf("compute: encode %s: %w", typ, err)
	}
	ev.Attributes = attrs

	ch := m.await(req.RequestID)
	defer m.forget(req.RequestID)

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case m.out <- outbound{ev: ev, requestID: req.RequestID}:
	case <-m.done:
		return nil, workflow.MemberDisconnected(what)
	case <-timer.C:
		return nil, workflow.DispatchTimeout(what, timeout.Milliseconds())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-ch:
		if r.err != nil {
			// Not classified: the engine reports it as WORKFLOW_FAILED.
			return nil, fmt.Errorf("send to compute member failed: %w", r.err)
		}
		return r.resp, nil
	case <-m.done:
		return nil, workflow.MemberDisconnected(what)
	case <-timer.C:
		return nil, workflow.DispatchTimeout(what, timeout.Milliseconds())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// memberFor picks a member of tenant serving tags: one connected here
// first; in cluster mode (Config.Cluster) otherwise a live peer whose member
// tags match, returned as node with a nil member. With none it waits up
// to DispatchWaitTimeout for a local join or a peer to show up (polling
// membership every peerPoll). localOnly neither waits nor looks at peers.
func (s *Server) memberFor(ctx context.Context, tenant string, tags []string, tagsCSV string, localOnly bool) (*memberConn, cluster.Node, error) {
	var deadline <-chan time.Time
	var poll <-chan time.Time
	for {
		joined := s.reg.joinSignal() // taken before pick, so no join is missed
		if m := s.reg.pick(tenant, tags); m != nil {
			return m, cluster.Node{}, nil
		}
		if localOnly {
			return nil, cluster.Node{}, workflow.NoMemberForTag(tagsCSV)
		}
		if s.dir != nil {
			if n, ok := s.pickPeer(tenant, tags); ok {
				return nil, n, nil
			}
		}
		if deadline == nil {
			if s.cfg.DispatchWaitTimeout <= 0 {
				return nil, cluster.Node{}, workflow.NoMemberForTag(tagsCSV)
			}
			t := time.NewTimer(s.cfg.DispatchWaitTimeout)
			defer t.Stop()
			deadline = t.C
			if s.testWaiting != nil {
				s.testWaiting()
			}
			if s.dir != nil {
				tk := time.NewTicker(peerPoll)
				defer tk.Stop()
				poll = tk.C
			}
		}
		select {
		case <-joined:
		case <-poll:
		case <-deadline:
			return nil, cluster.Node{}, workflow.NoMemberForTag(tagsCSV)
		case <-ctx.Done():
			return nil, cluster.Node{}, ctx.Err()
		case <-s.stopping:
			return nil, cluster.Node{}, workflow.NoMemberForTag(tagsCSV)
		}
	}
}

var errUnknownKind = errors.New("unknown principal kind")

// attributes are the CloudEvent extension attributes of a dispatch.
func attributes(c *workflow.Call) (map[string]*ce.CloudEvent_CloudEventAttributeValue, error) {
	switch c.Auth.Kind {
	case "user", "service", "system":
	default:
		return nil, &apierr.Error{Code: apierr.ServerError, Message: "cannot dispatch: principal kind is not user, service or system", Cause: errUnknownKind}
	}
	a := map[string]*ce.CloudEvent_CloudEventAttributeValue{
		wire.AttrAuthType: wire.StringAttr(c.Auth.Kind),
		wire.AttrAuthID:   wire.StringAttr(c.Auth.ID),
	}
	if len(c.Auth.Roles) > 0 {
		a[wire.AttrAuthClaims] = wire.StringAttr(strings.Join(c.Auth.Roles, ","))
	}
	if c.TxToken != "" {
		a[wire.AttrTxToken] = wire.StringAttr(c.TxToken)
	}
	return a, nil
}
