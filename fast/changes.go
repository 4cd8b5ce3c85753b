package fast

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/changefeed"
	"svc/iam"
	"svc/platform/apierr"
)

// The change feed's HTTP door (docs/decisions/0032-change-events.md):
// subscription management and Server-Sent Events, an svc extension.

// sseKeepAlive is how often an idle stream sends a comment line, so a
// consumer that went away is noticed by a failed write and proxies keep
// the connection open.
const sseKeepAlive = 15 * time.Second

func changeFeedExtRoutes() []Route {
	return []Route{
		{"POST", "/subscriptions", "createSubscription", TagEntity, "Subscribe to entity changes (svc extension)", Authenticated, nil},
		{"GET", "/subscriptions", "listSubscriptions", TagEntity, "List change-feed subscriptions (svc extension)", Authenticated, nil},
		{"GET", "/subscriptions/{subscriptionId}", "getSubscription", TagEntity, "Get a subscription with its lag (svc extension)", Authenticated, nil},
		{"PATCH", "/subscriptions/{subscriptionId}", "updateSubscription", TagEntity, "Change a subscription's includeBody, batching or ttl (svc extension)", Authenticated, nil},
		{"DELETE", "/subscriptions/{subscriptionId}", "deleteSubscription", TagEntity, "Delete a subscription (svc extension)", Authenticated, nil},
		{"GET", "/subscriptions/{subscriptionId}/events", "streamSubscriptionEvents", TagEntity, "Stream a subscription's events as Server-Sent Events (svc extension)", Authenticated, nil},
		{"GET", "/changes", "streamChanges", TagEntity, "Stream live entity changes as Server-Sent Events (svc extension)", Authenticated, nil},
	}
}

func changeFeedExtDocs() map[string]opDoc {
	filter := obj("Which events: one model (name and version required), optionally kinds, states and a body condition.", Props{
		"modelName":     str("Entity model name."),
		"modelVersion":  &Schema{Type: SchemaType{"integer"}, Format: "int32", Minimum: ptr[int64](1)},
		"kinds":         arr(enum("", "CREATE", "UPDATE", "DELETE"), "Only these kinds; default all."),
		"fromState":     str("Only events whose entity was in this state before the commit."),
		"toState":       str("Only events whose entity is in this state after the commit."),
		"bodyPredicate": &Schema{Type: SchemaType{"object"}, Description: "A condition (the search condition language) on the body after the change; lifecycle and function conditions are refused at any depth (400 naming the path)."},
	}, "modelName", "modelVersion")
	spec := Props{
		"filter":             filter,
		"delivery":           enum("DURABLE (default): a cursor is kept and a reconnect resumes; LIVE_ONLY: from attach time on.", "DURABLE", "LIVE_ONLY"),
		"consumption":        enum("BROADCAST only.", "BROADCAST"),
		"includeBody":        enum("Bodies in each event; default NONE.", "NONE", "AFTER", "BEFORE_AND_AFTER"),
		"batching":           obj("", Props{"windowMs": &Schema{Type: SchemaType{"integer"}}, "maxEvents": &Schema{Type: SchemaType{"integer"}}}),
		"startFromTimestamp": dateTime("DURABLE only: start before the first event at this instant, within the retention."),
		"ttl":                str("Go duration (\"720h\"), at least 1m; a durable subscription with no consumer attached for this long is deleted. Default SVC_CHANGEFEED_SUBSCRIPTION_TTL (720h)."),
		"webhook": obj("svc extension: POST the events to this receiver (DURABLE only), in signed batches (Standard Webhooks). See `svc help changes`.", Props{
			"url": str("An https URL on a public address (the SSRF guard refuses loopback, private and link-local hosts at create and at every connection)."),
		}, "url"),
	}
	resource := obj("A subscription.", merge(spec, Props{
		"webhook": obj("The receiver, with its delivery state.", Props{
			"url":    str("The receiver."),
			"secret": str("`whsec_` and base64: the signing key of webhook-signature. Only in the answer to create; never shown again."),
			"status": obj("Delivery state.", Props{
				"failing":             &Schema{Type: SchemaType{"boolean"}, Description: "Set after SVC_WEBHOOK_FAILING_AFTER consecutive failures; cleared by the next success."},
				"consecutiveFailures": &Schema{Type: SchemaType{"integer"}},
				"lastError":           str("The last failure: the HTTP status and the start of the answer, or the transport error."),
				"lastAttemptAt":       dateTime(""),
				"nextAttemptAt":       dateTime("When a failed request is tried again."),
			}),
		}),
		"id":             str("Subscription id."),
		"cursor":         str("Position after the last acknowledged event (opaque)."),
		"createdAt":      dateTime(""),
		"lastAttachedAt": dateTime("When a consumer last attached or acknowledged (an attached stream stamps it every minute)."),
		"detached": obj("Set when the backlog passed the ceiling (SVC_CHANGEFEED_BACKLOG_MAX_EVENTS unacknowledged events, or one older than SVC_CHANGEFEED_RETENTION): "+
			"the attached consumer was cut (BACKLOG_EXCEEDED) and events past the ceiling are pruned from the log.", Props{
			"at": dateTime(""), "reason": enum("", "BACKLOG_EVENTS", "BACKLOG_AGE"), "events": &Schema{Type: SchemaType{"integer"}, Description: "The backlog then."}}),
		"lag": obj("Unacknowledged events of the subscription's model and the age of the oldest (DURABLE only).", Props{
			"events": &Schema{Type: SchemaType{"integer"}}, "oldestAgeMs": &Schema{Type: SchemaType{"integer"}}}),
	}))
	eRole := e(403, "FORBIDDEN: ROLE_M2M or ROLE_ADMIN is required.")
	e404 := e(404, "NOT_FOUND: no such subscription in this tenant.")
	sse := &Response{Description: "`text/event-stream`: `id:` the event's cursor, `event: change`, `data:` the event as JSON " +
		"(eventId, tenantId, transactionId, cursor, emittedAt, modelName, modelVersion, entityId, kind, fromState, toState, " +
		"transitionName, bodyBefore, bodyAfter). A stream that is cut ends with `event: cut` and data {\"reason\": …, \"detail\": …}: " +
		"SLOW_CONSUMER (live), SHUTDOWN, BACKLOG_EXCEEDED (the subscription was detached), DELETED (the subscription was deleted).",
		Content: content("text/event-stream", str(""))}
	return map[string]opDoc{
		"createSubscription": {
			desc: "Creates a subscription to entity changes in the caller's tenant (from the token). Needs ROLE_M2M or ROLE_ADMIN. " +
				"Answers 201 with the resource and its starting cursor. See `svc help changes`.",
			body: jsonBody("The subscription.", obj("", spec, "filter"), true),
			ok:   okJSON("The subscription.", resource),
			errs: []errDoc{e(400, "BAD_REQUEST: the definition is invalid (properties.path names the member), or a webhook URL that is not https or whose host is in a blocked address range."), eRole},
		},
		"listSubscriptions": {
			desc:   "Lists the tenant's subscriptions by id, with their lag.",
			params: []*Parameter{query("after", "Start after this id (the previous page's `next`).", str("")), query("limit", "Page size.", intRange("int32", 1, 1000, 100))},
			ok:     okJSON("A page.", obj("", Props{"subscriptions": arr(resource, ""), "next": str("Pass as `after` for the next page; absent on the last.")})),
			errs:   []errDoc{eRole},
		},
		"getSubscription":    {desc: "Returns a subscription with its lag.", ok: okJSON("The subscription.", resource), errs: []errDoc{eRole, e404}},
		"updateSubscription": {desc: "Changes includeBody, batching or ttl; they apply forward. Any other member answers 400 naming it.", body: jsonBody("The changes.", obj("", Props{"includeBody": spec["includeBody"], "batching": spec["batching"], "ttl": spec["ttl"]}), true), ok: okJSON("The subscription.", resource), errs: []errDoc{e(400, "BAD_REQUEST: an immutable or unknown member, or an invalid value."), eRole, e404}},
		"deleteSubscription": {desc: "Deletes a subscription.", ok: okEmpty("Deleted."), errs: []errDoc{eRole, e404}},
		"streamSubscriptionEvents": {
			desc: "Streams the subscription's events as Server-Sent Events, in commit order per entity, at least once (dedupe by eventId). " +
				"With `Last-Event-ID` (the cursor of the last event received; EventSource sends it on reconnect) the stream resumes after it " +
				"and acknowledges everything up to it; without, it resumes after the acknowledged cursor.",
			params: []*Parameter{header("Last-Event-ID", "Cursor of the last event received.", str(""), false)},
			ok:     sse,
			errs:   []errDoc{e(400, "BAD_REQUEST: Last-Event-ID is not a cursor."), eRole, e404},
		},
		"streamChanges": {
			desc: "A live-only stream of the tenant's changes passing the filter, from now on, with no stored state. " +
				"A consumer that falls more than its buffer behind is cut with a final `event: cut` (reason SLOW_CONSUMER).",
			params: []*Parameter{queryReq("modelName", "", str("")), queryReq("modelVersion", "", &Schema{Type: SchemaType{"integer"}}),
				arrayQuery("kinds", "Only these kinds (repeat the key, or comma-separated).", str(""), false),
				query("fromState", "", str("")), query("toState", "", str("")),
				query("includeBody", "", enum("", "NONE", "AFTER", "BEFORE_AND_AFTER")),
				query("bodyPredicate", "A condition as JSON, as in a subscription's filter.", str(""))},
			ok:   sse,
			errs: []errDoc{e(400, "BAD_REQUEST: a parameter is invalid (properties.path names it)."), eRole},
		},
	}
}

func merge(a, b Props) Props {
	out := Props{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func changeFeedHandlers(s *Server) map[string]fasthttp.RequestHandler {
	if s.deps.Changes == nil || s.deps.ChangeHub == nil {
		return nil
	}
	h := &changeFeedAPI{s: s, svc: s.deps.Changes, hub: s.deps.ChangeHub}
	return map[string]fasthttp.RequestHandler{
		"createSubscription":       h.role(h.create),
		"listSubscriptions":        h.role(h.list),
		"getSubscription":          h.role(h.get),
		"updateSubscription":       h.role(h.patch),
		"deleteSubscription":       h.role(h.delete),
		"streamSubscriptionEvents": h.role(h.events),
		"streamChanges":            h.role(h.changes),
	}
}

type changeFeedAPI struct {
	s   *Server
	svc *changefeed.Service
	hub *changefeed.Hub
}

// role lets through ROLE_M2M and ROLE_ADMIN principals.
func (h *changeFeedAPI) role(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		p := PrincipalOf(ctx)
		if p == nil || !(p.HasRole(iam.RoleM2M) || p.HasRole(iam.RoleAdmin)) {
			h.s.writeProblem(ctx, NewProblem(apierr.Forbidden, "the change feed needs ROLE_M2M or ROLE_ADMIN"))
			return
		}
		next(ctx)
	}
}

func (h *changeFeedAPI) create(ctx *fasthttp.RequestCtx) {
	sub, err := h.svc.Create(dctx(ctx), PrincipalOf(ctx).TenantID, ctx.PostBody())
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	h.s.writeJSON(ctx, sub)
	ctx.SetStatusCode(fasthttp.StatusCreated)
}

func (h *changeFeedAPI) list(ctx *fasthttp.RequestCtx) {
	limit, err := queryInt(ctx, "limit", 100)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	if limit < 1 || limit > 1000 {
		h.s.writeError(ctx, badParam("limit", strconv.Itoa(limit)))
		return
	}
	subs, next, err := h.svc.List(dctx(ctx), PrincipalOf(ctx).TenantID, string(ctx.QueryArgs().Peek("after")), limit)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	out := struct {
		Subscriptions []changefeed.Subscription `json:"subscriptions"`
		Next          string                    `json:"next,omitempty"`
	}{subs, next}
	h.s.writeJSON(ctx, out)
}

func (h *changeFeedAPI) get(ctx *fasthttp.RequestCtx) {
	sub, err := h.svc.Get(dctx(ctx), PrincipalOf(ctx).TenantID, pathText(ctx, "subscriptionId"))
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	h.s.writeJSON(ctx, sub)
}

func (h *changeFeedAPI) patch(ctx *fasthttp.RequestCtx) {
	sub, err := h.svc.Patch(dctx(ctx), PrincipalOf(ctx).TenantID, pathText(ctx, "subscriptionId"), ctx.PostBody())
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	h.s.writeJSON(ctx, sub)
}

func (h *changeFeedAPI) delete(ctx *fasthttp.RequestCtx) {
	if err := h.svc.Delete(dctx(ctx), PrincipalOf(ctx).TenantID, pathText(ctx, "subscriptionId")); err != nil {
		h.s.writeError(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// sseStart sets the stream's headers.
func sseStart(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("text/event-stream")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no") // nginx: pass each event on
}

// sseWriter writes events, bounding each flush by stall (the hub's,
// SVC_CHANGEFEED_STALL_TIMEOUT): a consumer that has not taken its bytes
// for this long is cut, so it holds no goroutine forever.
type sseWriter struct {
	w     *bufio.Writer
	conn  net.Conn
	stall time.Duration
	buf   []byte
}

func (s *sseWriter) flush() error {
	if s.conn != nil {
		_ = s.conn.SetWriteDeadline(time.Now().Add(s.stall))
	}
	return s.w.Flush()
}

func (s *sseWriter) event(ev *changefeed.Event) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	s.buf = append(s.buf[:0], "id: "...)
	s.buf = append(s.buf, ev.Cursor...)
	s.buf = append(s.buf, "\nevent: change\ndata: "...)
	s.buf = append(s.buf, data...)
	s.buf = append(s.buf, "\n\n"...)
	_, err = s.w.Write(s.buf)
	return err
}

// cut writes the final event of a stream the server ends.
func (s *sseWriter) cut(reason, detail string) {
	data, _ := json.Marshal(map[string]string{"reason": reason, "detail": detail})
	s.w.WriteString("event: cut\ndata: ")
	s.w.Write(data)
	s.w.WriteString("\n\n")
	s.flush()
}

func (s *sseWriter) keepAlive() error {
	s.w.WriteString(": keep-alive\n\n")
	return s.flush()
}

func (h *changeFeedAPI) events(ctx *fasthttp.RequestCtx) {
	last := string(ctx.Request.Header.Peek("Last-Event-ID"))
	d, err := h.hub.AttachDurable(dctx(ctx), PrincipalOf(ctx).TenantID, pathText(ctx, "subscriptionId"), last)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	sseStart(ctx)
	conn, stall := ctx.Conn(), h.hub.Stall()
	log := h.s.log
	// Runs after the handler returns, while fasthttp writes the body: the
	// request context is not used there; a consumer that goes away ends
	// the stream through the failed write.
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer d.Close()
		sw := &sseWriter{w: w, conn: conn, stall: stall}
		if sw.keepAlive() != nil {
			return
		}
		for {
			evs, err := d.Next(context.Background(), sseKeepAlive)
			if errors.Is(err, changefeed.ErrStopped) {
				sw.cut(changefeed.CutShutdown, "the node is shutting down; reconnect with Last-Event-ID to resume")
				return
			}
			if errors.Is(err, changefeed.ErrDetached) {
				sw.cut(changefeed.CutBacklog, "the subscription's backlog passed the ceiling (see its detached member); "+
					"reconnect with Last-Event-ID to acknowledge what was received and resume")
				return
			}
			if errors.Is(err, changefeed.ErrGone) {
				sw.cut(changefeed.CutDeleted, "the subscription was deleted")
				return
			}
			if err != nil {
				log.Warn("changefeed: stream stopped", "error", err)
				sw.cut("ERROR", "reading the change log failed; reconnect with Last-Event-ID to resume")
				return
			}
			if len(evs) == 0 {
				if sw.keepAlive() != nil {
					return
				}
				continue
			}
			for i := range evs {
				if sw.event(&evs[i]) != nil {
					return
				}
			}
			if sw.flush() != nil {
				return
			}
		}
	})
}

// liveFilter reads /changes' filter from the query.
func liveFilter(ctx *fasthttp.RequestCtx) (*changefeed.Filter, string, error) {
	q := ctx.QueryArgs()
	f := &changefeed.Filter{ModelName: string(q.Peek("modelName")), FromState: string(q.Peek("fromState")), ToState: string(q.Peek("toState"))}
	if v := q.Peek("modelVersion"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			return nil, "", apierr.New(apierr.BadRequest, "modelVersion: not an integer", apierr.P("path", "modelVersion"))
		}
		f.ModelVersion = n
	}
	for _, k := range q.PeekMulti("kinds") {
		for _, part := range strings.Split(string(k), ",") {
			if part = strings.TrimSpace(part); part != "" {
				f.Kinds = append(f.Kinds, part)
			}
		}
	}
	if p := q.Peek("bodyPredicate"); len(p) > 0 {
		f.BodyPredicate = append([]byte(nil), p...)
	}
	if err := f.Compile("query"); err != nil {
		return nil, "", err
	}
	body := string(q.Peek("includeBody"))
	switch body {
	case "":
		body = changefeed.BodyNone
	case changefeed.BodyNone, changefeed.BodyAfter, changefeed.BodyBeforeAndAter:
	default:
		return nil, "", apierr.New(apierr.BadRequest, "includeBody: one of NONE, AFTER, BEFORE_AND_AFTER", apierr.P("path", "includeBody"))
	}
	return f, body, nil
}

func (h *changeFeedAPI) changes(ctx *fasthttp.RequestCtx) {
	f, body, err := liveFilter(ctx)
	if err != nil {
		h.s.writeError(ctx, err)
		return
	}
	l, err := h.hub.AttachLive(dctx(ctx), PrincipalOf(ctx).TenantID, f, body)
	if err != nil {
		h.s.writeProblem(ctx, NewProblem(apierr.ServiceUnavailable, err.Error()))
		return
	}
	sseStart(ctx)
	conn, stall := ctx.Conn(), h.hub.Stall()
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer l.Close()
		sw := &sseWriter{w: w, conn: conn, stall: stall}
		if sw.keepAlive() != nil {
			return
		}
		tick := time.NewTicker(sseKeepAlive)
		defer tick.Stop()
		for {
			select {
			case ev := <-l.Events:
				if sw.event(&ev) != nil {
					return
				}
				// Write what else is queued before flushing once.
				for more := true; more; {
					select {
					case ev := <-l.Events:
						if sw.event(&ev) != nil {
							return
						}
					default:
						more = false
					}
				}
				if sw.flush() != nil {
					return
				}
			case <-l.Done():
				detail := "this consumer fell behind by more than its buffer; reconnect (events in between are not replayed: use a durable subscription for that)"
				if l.Reason() == changefeed.CutShutdown {
					detail = "the node is shutting down; reconnect"
				}
				sw.cut(l.Reason(), detail)
				return
			case <-tick.C:
				if sw.keepAlive() != nil {
					return
				}
			}
		}
	})
}
