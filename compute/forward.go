package compute

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	json "github.com/goccy/go-json"

	"svc/cluster"
	"svc/cluster/peer"
	"svc/compute/wire"
	"svc/platform/apierr"
	"svc/workflow"
)

// Compute dispatch across nodes (docs/decisions/0026-cluster.md). A member keeps its stream open to one node;
// a dispatch on any other node finds it through membership, whose node
// metadata carries every node's member tags per tenant (OnTagsChanged),
// and forwards the call over the authenticated internal route. The node
// that holds the member sends it the request exactly as a local dispatch
// would (same attributes, the owner's tx token), waits for the answer and
// returns it.

// CalloutPath is the internal route of a forwarded dispatch.
const CalloutPath = "/internal/dispatch/callout"

// peerPoll is how often a waiting dispatch looks at membership again.
const peerPoll = 200 * time.Millisecond

// Forwarder calls a peer's internal route; *peer.Client with the node's
// address satisfies it through ForwardFunc.
type Forwarder func(ctx context.Context, node cluster.Node, path string, body []byte) ([]byte, error)

// OnTagsChanged registers fn, called with a tenant's connected members'
// tags whenever a member of that tenant joins or leaves this node and the
// set changes: the sorted union of their tags, an empty non-nil slice
// while members without tags are connected, nil once none is. Membership
// puts them in this node's metadata (cluster.Node.Tags), which peers read
// to forward dispatches here. Calls are serialised, in change order; fn
// must not block for long (a join or leave waits for it).
func (s *Server) OnTagsChanged(fn func(tenant string, tags []string)) {
	s.tagsMu.Lock()
	s.tagsFn = fn
	s.tagsMu.Unlock()
}

// Tags returns the current per-tenant tags of this node's members, in the
// shape OnTagsChanged reports them (for membership's initial metadata).
func (s *Server) Tags() map[string][]string {
	s.reg.mu.RLock()
	defer s.reg.mu.RUnlock()
	out := make(map[string][]string, len(s.reg.byTenant))
	for t := range s.reg.byTenant {
		out[t] = s.reg.tagsLocked(t)
	}
	return out
}

// tagsChanged reports tenant's tags to the hook when they changed.
func (s *Server) tagsChanged(tenant string) {
	s.tagsMu.Lock()
	defer s.tagsMu.Unlock()
	s.reg.mu.RLock()
	tags := s.reg.tagsLocked(tenant)
	s.reg.mu.RUnlock()
	last, known := s.lastTags[tenant]
	if known == (tags != nil) && slices.Equal(last, tags) {
		return
	}
	if tags == nil {
		delete(s.lastTags, tenant)
	} else {
		s.lastTags[tenant] = tags
	}
	if s.tagsFn != nil {
		s.tagsFn(tenant, tags)
	}
}

// tagsLocked is the sorted union of tenant's members' tags; nil when it
// has no member. The caller holds r.mu.
func (r *registry) tagsLocked(tenant string) []string {
	ms := r.byTenant[tenant]
	if len(ms) == 0 {
		return nil
	}
	out := []string{}
	for _, m := range ms {
		for _, t := range m.tags {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

// pickPeer returns a random live peer (not this node) with a member of
// tenant serving one of tags.
func (s *Server) pickPeer(tenant string, tags []string) (cluster.Node, bool) {
	self := s.dir.Self().ID
	var chosen cluster.Node
	n := 0
	for _, node := range s.dir.Live() {
		if node.ID == self {
			continue
		}
		have, ok := node.Tags[tenant]
		if !ok || !servesTags(have, tags) {
			continue
		}
		n++
		if rand.IntN(n) == 0 {
			chosen = node
		}
	}
	return chosen, n > 0
}

func servesTags(have, want []string) bool {
	if len(want) == 0 {
		return true
	}
	for _, w := range want {
		if slices.Contains(have, w) {
			return true
		}
	}
	return false
}

// callout is the sealed body of a forwarded dispatch: the request as the
// member will get it (without its ids, which the serving node assigns)
// and the call's routing and attributes.
type callout struct {
	Type      string        `json:"type"`
	What      string        `json:"what"`
	Tenant    string        `json:"tenant"`
	AuthKind  string        `json:"authKind"`
	AuthID    string        `json:"authId"`
	Roles     []string      `json:"roles,omitempty"`
	TxToken   string        `json:"txToken,omitempty"`
	Tags      []string      `json:"tags,omitempty"`
	TagsCSV   string        `json:"tagsCsv,omitempty"`
	TimeoutMs int64         `json:"timeoutMs"`
	Request   *wire.Request `json:"request"`
}

// calloutReply is the serving node's answer: the member's response, or
// the dispatch's error. A catalogue error keeps its code, message,
// retryability and properties; any other error only its text.
type calloutReply struct {
	Response *wire.Response `json:"response,omitempty"`
	Error    *replyError    `json:"error,omitempty"`
}

type replyError struct {
	Code      string         `json:"code,omitempty"`
	Message   string         `json:"message"`
	Retryable bool           `json:"retryable,omitempty"`
	Props     []replyErrProp `json:"props,omitempty"`
}

type replyErrProp struct {
	Key   string `json:"k"`
	Value any    `json:"v"`
}

// DispatchForwardFailed is the error of a forwarded dispatch that got no
// answer from the peer (503, retryable).
func DispatchForwardFailed(node string, cause error) error {
	return &apierr.Error{Code: apierr.DispatchForwardFailed, Retryable: true,
		Message: fmt.Sprintf("forwarding the dispatch to node %s failed", node),
		Props:   []apierr.Prop{apierr.P("nodeId", node)}, Cause: cause}
}

// apierr.DispatchForwardFailed is DISPATCH_FORWARD_FAILED.

// forward sends a dispatch to node and returns the member's response or
// the error the serving node met, recreated with the same code.
func (s *Server) forward(ctx context.Context, node cluster.Node, c *workflow.Call, typ string, req *wire.Request, what string, timeout time.Duration) (*wire.Response, error) {
	body, err := json.Marshal(&callout{Type: typ, What: what, Tenant: c.Tenant, AuthKind: c.Auth.Kind, AuthID: c.Auth.ID,
		Roles: c.Auth.Roles, TxToken: c.TxToken, Tags: c.Tags, TagsCSV: c.TagsCSV, TimeoutMs: timeout.Milliseconds(), Request: req})
	if err != nil {
		return nil, fmt.Errorf("compute: encoding a forwarded %s: %w", typ, err)
	}
	out, err := s.fwd(ctx, node, CalloutPath, body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, DispatchForwardFailed(node.ID, err)
	}
	var rep calloutReply
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, DispatchForwardFailed(node.ID, fmt.Errorf("decoding the reply: %w", err))
	}
	if e := rep.Error; e != nil {
		if e.Code == "" {
			return nil, fmt.Errorf("node %s: %s", node.ID, e.Message)
		}
		code, ok := apierr.Lookup(e.Code)
		if !ok {
			// A code this node's catalogue lacks (a peer of another
			// version): the client still reads the peer's code in the
			// message.
			code = apierr.ServerError
			e.Message = e.Code + ": " + e.Message
		}
		ae := &apierr.Error{Code: code, Message: e.Message, Retryable: e.Retryable}
		for _, p := range e.Props {
			ae.Props = append(ae.Props, apierr.P(p.Key, p.Value))
		}
		return nil, ae
	}
	if rep.Response == nil {
		return nil, DispatchForwardFailed(node.ID, fmt.Errorf("empty reply"))
	}
	return rep.Response, nil
}

// maxCalloutTimeoutMs is the largest timeoutMs a time.Duration holds.
const maxCalloutTimeoutMs = math.MaxInt64 / int64(time.Millisecond)

// parseCallout reads a forwarded dispatch. Anything a node would not have
// sent (not the JSON shape, no request or tenant, a type or principal kind
// outside the protocol, a timeout outside 0..maxCalloutTimeoutMs) wraps
// peer.ErrMalformed, which the internal route answers with a sealed 400,
// before any member is looked up.
func parseCallout(body []byte) (*callout, error) {
	var co callout
	if err := json.Unmarshal(body, &co); err != nil {
		return nil, peer.Malformed("the body is not a callout: %v", err)
	}
	switch {
	case co.Request == nil:
		return nil, peer.Malformed("the callout has no request")
	case co.Tenant == "":
		return nil, peer.Malformed("the callout has no tenant")
	case co.TimeoutMs < 0 || co.TimeoutMs > maxCalloutTimeoutMs:
		return nil, peer.Malformed("the callout's timeoutMs %d is outside 0..%d", co.TimeoutMs, maxCalloutTimeoutMs)
	}
	switch co.Type {
	case wire.TypeProcessorRequest, wire.TypeCriteriaRequest, wire.TypeFunctionRequest:
	default:
		return nil, peer.Malformed("callout of unknown type %q", co.Type)
	}
	switch co.AuthKind {
	case "user", "service", "system":
	default:
		return nil, peer.Malformed("the callout's principal kind %q is not user, service or system", co.AuthKind)
	}
	return &co, nil
}

// callFor is the dispatch a parsed callout asks for.
func callFor(co *callout) *workflow.Call {
	return &workflow.Call{Tenant: co.Tenant, Auth: workflow.Auth{Kind: co.AuthKind, ID: co.AuthID, Roles: co.Roles},
		TxToken: co.TxToken, Tags: co.Tags, TagsCSV: co.TagsCSV, Timeout: time.Duration(co.TimeoutMs) * time.Millisecond}
}

// ServeCallout serves a forwarded dispatch (the internal route's
// handler): it runs on this node's members only, without waiting for one
// to join and without forwarding again, so a call crosses at most one
// hop. The reply carries the member's response or the dispatch error.
func (s *Server) ServeCallout(ctx context.Context, body []byte) ([]byte, error) {
	co, err := parseCallout(body)
	if err != nil {
		return nil, err
	}
	resp, err := s.exchange(ctx, callFor(co), co.Type, co.Request, co.What, true)
	var rep calloutReply
	if err != nil {
		rep.Error = &replyError{Message: err.Error()}
		if ae, ok := apierr.As(err); ok {
			rep.Error = &replyError{Code: ae.Code.String(), Message: ae.Message, Retryable: ae.Retryable}
			for _, p := range ae.Props {
				rep.Error.Props = append(rep.Error.Props, replyErrProp{Key: p.Key, Value: p.Value})
			}
		}
	} else {
		rep.Response = resp
	}
	return json.Marshal(&rep)
}
