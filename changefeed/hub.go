package changefeed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"svc/platform/apierr"
	"svc/storage"
)

// Hub is this node's tail of the change log. One goroutine reads every
// tenant's new events once and hands each to the live streams attached
// here whose filter it passes, and wakes the durable streams, which read
// their own subscription's events from the log from their cursor. It is
// woken by this node's commits (Notify, from the Recorder), by other
// nodes' (NotifyRemote, from the cluster bus), and polls as a backstop,
// only while something is attached: an idle node reads nothing.
type Hub struct {
	svc *Service
	log storage.ChangeLog
	opt HubOptions

	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	live     map[*Live]struct{}
	attached int
	gen      chan struct{} // closed when new events were seen
	stopOnce sync.Once
	cursor   storage.ChangeCursor
	placed   bool // cursor has been read from the log
	started  bool
}

// HubOptions bound the hub's work.
type HubOptions struct {
	// Poll is the backstop interval (events committed on another node
	// whose announcement was lost); 0 means 1s.
	Poll time.Duration
	// Buffer is each live stream's queue of events; a stream that falls
	// this far behind is cut. 0 means 1024.
	Buffer int
	// Batch is the most events one read takes; 0 means 256.
	Batch int
	// Touch is how often an attached durable stream checks its
	// subscription (still there, not detached) and stamps it as attached,
	// so the ttl counts only time with no consumer; 0 means 1 minute.
	Touch time.Duration
	// Stall is how long the doors wait on a consumer that takes nothing
	// before they cut it (SVC_CHANGEFEED_STALL_TIMEOUT); 0 means 30 s.
	Stall time.Duration
	Log   *slog.Logger
}

// NewHub returns a hub over the service's log; Start runs it.
func NewHub(svc *Service, opt HubOptions) *Hub {
	if opt.Poll <= 0 {
		opt.Poll = time.Second
	}
	if opt.Buffer <= 0 {
		opt.Buffer = 1024
	}
	if opt.Batch <= 0 {
		opt.Batch = 256
	}
	if opt.Touch <= 0 {
		opt.Touch = time.Minute
	}
	if opt.Stall <= 0 {
		opt.Stall = 30 * time.Second
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	return &Hub{svc: svc, log: svc.log, opt: opt, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		live: map[*Live]struct{}{}, gen: make(chan struct{})}
}

// Batch is the most events a durable stream reads at once.
func (h *Hub) Batch() int { return h.opt.Batch }

// Stall is how long a door waits on a consumer that takes nothing before
// it cuts the stream.
func (h *Hub) Stall() time.Duration { return h.opt.Stall }

// Start runs the tail until Stop.
func (h *Hub) Start() {
	h.mu.Lock()
	h.started = true
	h.mu.Unlock()
	go h.run()
}

// Stop ends the tail and every live stream (each gets its final event)
// and wakes durable streams so they see Stopped.
func (h *Hub) Stop() { h.stopOnce.Do(h.stopNow) }

func (h *Hub) stopNow() {
	h.mu.Lock()
	started := h.started
	h.mu.Unlock()
	close(h.stop)
	if started {
		<-h.done
	}
	h.mu.Lock()
	for l := range h.live {
		l.end(CutShutdown)
		delete(h.live, l)
	}
	h.mu.Unlock()
}

// Stopped is closed when the hub stops.
func (h *Hub) Stopped() <-chan struct{} { return h.stop }

// Notify wakes the tail: something was committed. While nothing is
// attached the tail rests (it resumes from the head at the next attach,
// which notifies itself), so a commit does not wake it: waking a parked
// goroutine on every create cost more CPU than recording the event.
func (h *Hub) Notify() {
	h.mu.Lock()
	idle := h.attached == 0
	h.mu.Unlock()
	if idle {
		return
	}
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Wait returns a channel closed when the tail next sees new events; a
// durable stream takes it before reading, so an event committed between
// its read and its wait still wakes it.
func (h *Hub) Wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gen
}

// Attached counts a durable stream while it runs (the tail polls only
// while something is attached); call the returned func when it ends.
func (h *Hub) Attached() (detach func()) {
	h.attach(1)
	var once sync.Once
	return func() { once.Do(func() { h.attach(-1) }) }
}

func (h *Hub) attach(d int) {
	h.mu.Lock()
	idle := h.attached == 0
	h.mu.Unlock()
	if idle && d > 0 {
		// The tail rests while nothing is attached: it resumes from the
		// head as it is now, so a new live stream starts now (and the
		// tail does not read what nobody was attached for).
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := h.log.ChangeHead(ctx)
		cancel()
		h.mu.Lock()
		if err == nil && h.attached == 0 {
			h.cursor, h.placed = c, true
		}
		h.mu.Unlock()
	}
	h.mu.Lock()
	h.attached += d
	h.mu.Unlock()
	h.Notify()
}

// Reasons a live stream ends.
const (
	CutSlowConsumer = "SLOW_CONSUMER"
	CutShutdown     = "SHUTDOWN"
	// A durable stream's subscription was detached (its backlog passed the
	// ceiling) or deleted.
	CutBacklog = "BACKLOG_EXCEEDED"
	CutDeleted = "DELETED"
)

// Live is a live-only stream attached to this node.
type Live struct {
	tenant string
	filter *Filter
	body   string
	// Events delivers matching events; it is never closed (Done says
	// when to stop reading).
	Events chan Event
	done   chan struct{}
	reason atomic.Pointer[string]
	detach func()
	hub    *Hub
}

// Done is closed when the stream is cut; Reason says why.
func (l *Live) Done() <-chan struct{} { return l.done }

// Reason is why the stream was cut ("" while it runs).
func (l *Live) Reason() string {
	if r := l.reason.Load(); r != nil {
		return *r
	}
	return ""
}

func (l *Live) end(reason string) {
	if l.reason.CompareAndSwap(nil, &reason) {
		close(l.done)
		l.detach()
	}
}

// Close detaches the stream (its consumer went away).
func (l *Live) Close() {
	h := l.hub
	h.mu.Lock()
	if _, ok := h.live[l]; ok {
		delete(h.live, l)
		h.attached--
	}
	h.mu.Unlock()
	l.end("CLOSED")
}

// AttachLive starts a live-only stream of tenant's events passing f, from
// now on. The model joins the watched set, of every node in a cluster
// (livecast.go), for as long as it runs.
func (h *Hub) AttachLive(ctx context.Context, tenant string, f *Filter, includeBody string) (*Live, error) {
	select {
	case <-h.stop:
		return nil, errors.New("changefeed: shutting down")
	default:
	}
	l := &Live{tenant: tenant, filter: f, body: includeBody, Events: make(chan Event, h.opt.Buffer), done: make(chan struct{}), hub: h}
	l.detach = h.svc.attachLive(tenant, f.Model())
	h.mu.Lock()
	h.live[l] = struct{}{}
	h.mu.Unlock()
	h.attach(1)
	return l, nil
}

func (h *Hub) run() {
	defer close(h.done)
	t := time.NewTicker(h.opt.Poll)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-h.wake:
		case <-t.C:
		}
		h.mu.Lock()
		idle := h.attached == 0
		h.mu.Unlock()
		if idle {
			continue
		}
		h.tail()
	}
}

// tail reads what is new and fans it out, until caught up.
func (h *Hub) tail() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.mu.Lock()
	if !h.placed {
		// First read: live streams start now, durable ones read their own.
		c, err := h.log.ChangeHead(ctx)
		if err != nil {
			h.mu.Unlock()
			h.opt.Log.Warn("changefeed: reading the log head", "error", err)
			return
		}
		h.cursor, h.placed = c, true
	}
	h.mu.Unlock()
	for {
		// attach may move the cursor (to the head, when the hub was idle)
		// while this reads: take it under the lock.
		h.mu.Lock()
		after := h.cursor
		h.mu.Unlock()
		evs, err := h.log.ReadChanges(ctx, storage.ChangeQuery{After: after, Limit: h.opt.Batch})
		if err != nil {
			h.opt.Log.Warn("changefeed: reading the log", "error", err)
			return
		}
		if len(evs) == 0 {
			return
		}
		h.mu.Lock()
		for i := range evs {
			e := &evs[i]
			for l := range h.live {
				if l.tenant != e.Tenant || !l.filter.Match(e) {
					continue
				}
				select {
				case l.Events <- EventOf(e, l.body):
				default:
					// Full: the consumer is not keeping up. Cut it rather than
					// hold events (or the writers) for it.
					delete(h.live, l)
					h.attached--
					l.end(CutSlowConsumer)
				}
			}
		}
		h.cursor = evs[len(evs)-1].Cursor
		close(h.gen)
		h.gen = make(chan struct{})
		h.mu.Unlock()
		if len(evs) < h.opt.Batch {
			return
		}
	}
}

// ErrStopped is returned by a durable stream's Next once the hub stopped.
var ErrStopped = errors.New("changefeed: the node is shutting down")

// ErrDetached is returned by a durable stream's Next once the sweep
// detached its subscription (the backlog passed the ceiling) after the
// stream attached; ErrGone once the subscription was deleted.
var (
	ErrDetached = errors.New("changefeed: the subscription's backlog passed the ceiling")
	ErrGone     = errors.New("changefeed: the subscription was deleted")
)

// Durable is a stream of one stored subscription's events from its
// cursor, attached to this node.
type Durable struct {
	hub      *Hub
	tenant   string
	id       string
	live     bool // a LIVE_ONLY subscription: nothing is acknowledged
	model    storage.ModelKey
	filter   *Filter
	body     string
	cursor   storage.ChangeCursor
	detach   func()
	attached time.Time // when this stream attached (the svc clock)
	touched  time.Time // when it last checked its subscription (wall clock)
}

// AttachDurable starts a stream of subscription id. With lastEventID
// (the SSE Last-Event-ID: the cursor of the last event the consumer
// received) the stream resumes after it and everything up to it is
// acknowledged; without, it resumes after the stored cursor. A LIVE_ONLY
// subscription starts at the newest event and acknowledges nothing.
func (h *Hub) AttachDurable(ctx context.Context, tenant, id, lastEventID string) (*Durable, error) {
	rec, sp, err := h.svc.load(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	now := h.svc.opt.Now().UTC()
	d := &Durable{hub: h, tenant: tenant, id: id, live: sp.Delivery == DeliveryLiveOnly, model: rec.Model, filter: &sp.Filter,
		body: sp.IncludeBody, cursor: rec.Cursor, attached: now, touched: time.Now()}
	switch {
	case sp.Delivery == DeliveryLiveOnly:
		if d.cursor, err = h.log.ChangeHead(ctx); err != nil {
			return nil, err
		}
	case lastEventID != "":
		c, err := storage.ParseChangeCursor(lastEventID)
		if err != nil {
			return nil, badField("Last-Event-ID", err.Error())
		}
		d.cursor = c
		if err := h.svc.subs.AckSubscription(ctx, tenant, id, c, now); err != nil {
			return nil, err
		}
	default:
		// Attaching counts against the ttl even without an ack.
		if err := h.svc.subs.AckSubscription(ctx, tenant, id, rec.Cursor, now); err != nil {
			return nil, err
		}
	}
	d.detach = h.Attached()
	return d, nil
}

// Cursor is the position after the last event Next returned.
func (d *Durable) Cursor() storage.ChangeCursor { return d.cursor }

// Next returns the next events passing the filter, waiting up to wait for
// some to be committed (nil, nil when none came). Events that do not pass
// move the cursor along silently.
func (d *Durable) Next(ctx context.Context, wait time.Duration) ([]Event, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		if time.Since(d.touched) >= d.hub.opt.Touch {
			if err := d.touch(ctx); err != nil {
				return nil, err
			}
		}
		gen := d.hub.Wait()
		evs, err := d.hub.log.ReadChanges(ctx, storage.ChangeQuery{Tenant: d.tenant, Model: &d.model, After: d.cursor, Limit: d.hub.opt.Batch})
		if err != nil {
			return nil, err
		}
		var out []Event
		for i := range evs {
			d.cursor = evs[i].Cursor
			if d.filter.Match(&evs[i]) {
				out = append(out, EventOf(&evs[i], d.body))
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		if len(evs) == d.hub.opt.Batch {
			continue
		}
		select {
		case <-gen:
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-d.hub.stop:
			return nil, ErrStopped
		}
	}
}

// touch checks the subscription is still there and not detached since
// the stream attached, and stamps it as attached (the ttl runs only while
// no consumer is).
func (d *Durable) touch(ctx context.Context) error {
	d.touched = time.Now()
	_, sp, err := d.hub.svc.load(ctx, d.tenant, d.id)
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Code == apierr.NotFound {
			return ErrGone
		}
		return err
	}
	if sp.Detached != nil && !sp.Detached.At.Before(d.attached) {
		return ErrDetached
	}
	err = d.hub.svc.subs.AckSubscription(ctx, d.tenant, d.id, storage.ChangeCursor{}, d.hub.svc.opt.Now().UTC())
	if errors.Is(err, storage.ErrNotFound) {
		return ErrGone
	}
	return err
}

// Ack acknowledges everything up to c, the cursor of an event the
// consumer received (the gRPC door's explicit acks; the SSE door acks
// with Last-Event-ID at attach): the stored cursor moves forward to c,
// never back, and the subscription counts as attached now (its ttl). A
// LIVE_ONLY subscription acknowledges nothing. A subscription deleted
// meanwhile is NOT_FOUND.
func (d *Durable) Ack(ctx context.Context, c storage.ChangeCursor) error {
	if d.live {
		return nil
	}
	err := d.hub.svc.subs.AckSubscription(ctx, d.tenant, d.id, c, d.hub.svc.opt.Now().UTC())
	if errors.Is(err, storage.ErrNotFound) {
		return notFound(d.id)
	}
	return err
}

// Close detaches the stream.
func (d *Durable) Close() { d.detach() }
