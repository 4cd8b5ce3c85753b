package changefeed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/storage"
)

// Options are the change feed's settings.
type Options struct {
	// Retention bounds how far back the log is kept (and so how far back
	// startFromTimestamp may reach), and so the age of a durable
	// subscription's backlog; 0 means 7 days.
	Retention time.Duration
	// BacklogMaxEvents is the backlog ceiling: the most unacknowledged
	// events a durable subscription may owe, and the most events the log
	// keeps of one tenant's model; 0 means 1,000,000.
	BacklogMaxEvents int64
	// DefaultTTL is how long a durable subscription without a ttl of its
	// own lives with no consumer attached; 0 means 30 days.
	DefaultTTL time.Duration
	// Announce tells the other nodes that the subscriptions changed (the
	// cluster bus); nil on one node.
	Announce func()
	// AnnounceLive tells the other nodes that the models this node's live
	// streams watch changed (a model's first live stream attached here, or
	// its last ended): cmd/svc publishes LiveAnnouncement on the cluster
	// bus. nil on one node.
	AnnounceLive func()
	Log          *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Webhook is the webhook door's settings (webhook.go).
	Webhook WebhookOptions
}

// Service manages subscriptions and keeps the watched set fresh.
type Service struct {
	subs    storage.Subscriptions
	log     storage.ChangeLog
	watched *Watched
	opt     Options

	mu     sync.Mutex
	stored map[watchKey]watch
	live   map[watchKey]int
	// remote holds the live keys other nodes announced, by node id, and
	// seq the last sequence number this node announced (livecast.go).
	remote map[string]remoteLive
	seq    int64
	// kick wakes the webhook deliverer of this node, when one runs.
	kick atomic.Pointer[func()]
}

// New returns the service over the subscription store and the engine's
// change log; w is the set the Recorder consults.
func New(subs storage.Subscriptions, log storage.ChangeLog, w *Watched, opt Options) *Service {
	if opt.Retention <= 0 {
		opt.Retention = 7 * 24 * time.Hour
	}
	if opt.BacklogMaxEvents <= 0 {
		opt.BacklogMaxEvents = 1_000_000
	}
	if opt.DefaultTTL <= 0 {
		opt.DefaultTTL = DefaultTTL
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	opt.Webhook.defaults()
	return &Service{subs: subs, log: log, watched: w, opt: opt, stored: map[watchKey]watch{}, live: map[watchKey]int{},
		remote: map[string]remoteLive{}}
}

// Log is the change log the service reads.
func (s *Service) Log() storage.ChangeLog { return s.log }

// Sync rebuilds the watched set from the store: at start, on every
// subscription change here or announced by another node, and
// periodically.
func (s *Service) Sync(ctx context.Context) error {
	all, err := s.subs.AllSubscriptions(ctx)
	if err != nil {
		return fmt.Errorf("changefeed: reading subscriptions: %w", err)
	}
	m := make(map[watchKey]watch, len(all))
	for i := range all {
		sub := &all[i]
		var sp Spec
		if err := json.Unmarshal(sub.Spec, &sp); err != nil {
			s.opt.Log.Warn("changefeed: unreadable subscription", "tenant", sub.Tenant, "id", sub.ID, "error", err)
			continue
		}
		_ = sp.Filter.Compile("filter")
		k := watchKey{sub.Tenant, sub.Model.Name, sub.Model.Version}
		x := m[k]
		lvl := bodyLevel(sub.IncludeBody)
		x.body = x.body || lvl >= 1 || sp.Filter.needsBody()
		x.before = x.before || lvl >= 2
		m[k] = x
	}
	s.mu.Lock()
	s.stored = m
	s.install()
	s.mu.Unlock()
	return nil
}

// attachLive counts a live stream on model in the watched set until the
// returned func is called. The first live stream on a key and the end of
// the last one are announced to the other nodes (AnnounceLive), which
// then record the model too.
func (s *Service) attachLive(tenant string, m storage.ModelKey) (detach func()) {
	k := watchKey{tenant, m.Name, m.Version}
	s.mu.Lock()
	s.live[k]++
	first := s.live[k] == 1
	s.install()
	s.mu.Unlock()
	if first && s.opt.AnnounceLive != nil {
		s.opt.AnnounceLive()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			last := false
			if s.live[k]--; s.live[k] <= 0 {
				delete(s.live, k)
				last = true
			}
			s.install()
			s.mu.Unlock()
			if last && s.opt.AnnounceLive != nil {
				s.opt.AnnounceLive()
			}
		})
	}
}

func (s *Service) changed(ctx context.Context) {
	if err := s.Sync(ctx); err != nil {
		s.opt.Log.Warn("changefeed: refreshing the watched set", "error", err)
	}
	if s.opt.Announce != nil {
		s.opt.Announce()
	}
	s.webhookChanged()
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func notFound(id string) error {
	return apierr.New(apierr.NotFound, "subscription "+id+" not found", apierr.P("id", id))
}

// Create stores a subscription defined by body. Its cursor starts at the
// newest event, or before the first event at startFromTimestamp, which
// must lie within the retention.
func (s *Service) Create(ctx context.Context, tenant string, body []byte) (*Subscription, error) {
	var sp Spec
	if err := decodeStrict(body, &sp); err != nil {
		return nil, err
	}
	if err := sp.check(); err != nil {
		return nil, err
	}
	if sp.Detached != nil {
		return nil, badField("detached", "is set by svc, not by a client")
	}
	if err := s.checkWebhook(ctx, &sp); err != nil {
		return nil, err
	}
	now := s.opt.Now()
	// The head is read before the subscription is stored and watched:
	// whatever is recorded for it comes after its cursor.
	var cur storage.ChangeCursor
	var err error
	if t := sp.StartFromTimestamp; t != nil {
		if t.After(now) || t.Before(now.Add(-s.opt.Retention)) {
			return nil, badField("startFromTimestamp", "must lie within the retention ("+s.opt.Retention.String()+" back from now)")
		}
		cur, err = s.log.ChangeCursorAt(ctx, tenant, sp.Filter.Model(), *t)
	} else {
		cur, err = s.log.ChangeHead(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("changefeed: starting cursor: %w", err)
	}
	spec, err := json.Marshal(&sp)
	if err != nil {
		return nil, fmt.Errorf("changefeed: encoding subscription: %w", err)
	}
	rec := storage.Subscription{Tenant: tenant, ID: newID(), Model: sp.Filter.Model(), IncludeBody: sp.IncludeBody, Spec: spec,
		Cursor: cur, CreatedAt: now.UTC(), AttachedAt: now.UTC()}
	secret := ""
	if sp.Webhook != nil {
		if secret, err = s.createWebhook(ctx, tenant, rec.ID); err != nil {
			return nil, err
		}
	}
	if err := s.subs.CreateSubscription(ctx, &rec); err != nil {
		if secret != "" {
			s.dropWebhook(ctx, tenant, rec.ID)
		}
		return nil, fmt.Errorf("changefeed: storing subscription: %w", err)
	}
	s.changed(ctx)
	out, err := s.resource(ctx, &rec, false)
	if err == nil && out.Webhook != nil {
		// Shown this once: GET and list never show it.
		out.Webhook.Secret = secret
	}
	return out, err
}

// load reads and decodes a stored subscription.
func (s *Service) load(ctx context.Context, tenant, id string) (*storage.Subscription, *Spec, error) {
	rec, err := s.subs.GetSubscription(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, notFound(id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("changefeed: reading subscription: %w", err)
	}
	var sp Spec
	if err := json.Unmarshal(rec.Spec, &sp); err != nil {
		return nil, nil, fmt.Errorf("changefeed: decoding subscription %s: %w", id, err)
	}
	if err := sp.Filter.Compile("filter"); err != nil {
		return nil, nil, fmt.Errorf("changefeed: stored subscription %s: %w", id, err)
	}
	if err := sp.checkMutable(); err != nil {
		return nil, nil, fmt.Errorf("changefeed: stored subscription %s: %w", id, err)
	}
	return rec, &sp, nil
}

// resource is rec as the API shows it, with its lag when withLag.
func (s *Service) resource(ctx context.Context, rec *storage.Subscription, withLag bool) (*Subscription, error) {
	var sp Spec
	if err := json.Unmarshal(rec.Spec, &sp); err != nil {
		return nil, fmt.Errorf("changefeed: decoding subscription %s: %w", rec.ID, err)
	}
	out := &Subscription{ID: rec.ID, Spec: sp, Cursor: rec.Cursor.String(), CreatedAt: rec.CreatedAt}
	if !rec.AttachedAt.IsZero() {
		t := rec.AttachedAt
		out.LastAttachedAt = &t
	}
	if withLag && sp.Delivery == DeliveryDurable {
		n, oldest, err := s.log.ChangeLag(ctx, rec.Tenant, rec.Model, rec.Cursor)
		if err != nil {
			return nil, fmt.Errorf("changefeed: measuring lag: %w", err)
		}
		out.Lag = &Lag{Events: n}
		if n > 0 {
			age := max(s.opt.Now().Sub(oldest).Milliseconds(), 0)
			out.Lag.OldestAgeMs = &age
		}
	}
	if err := s.webhookStatus(ctx, rec, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Get returns one subscription with its lag.
func (s *Service) Get(ctx context.Context, tenant, id string) (*Subscription, error) {
	rec, _, err := s.load(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	return s.resource(ctx, rec, true)
}

// List returns a page of tenant's subscriptions after the id afterID,
// and the id to pass for the next page ("" when this is the last).
func (s *Service) List(ctx context.Context, tenant, afterID string, limit int) ([]Subscription, string, error) {
	recs, err := s.subs.ListSubscriptions(ctx, tenant, afterID, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("changefeed: listing subscriptions: %w", err)
	}
	next := ""
	if len(recs) > limit {
		recs = recs[:limit]
		next = recs[limit-1].ID
	}
	out := make([]Subscription, 0, len(recs))
	for i := range recs {
		r, err := s.resource(ctx, &recs[i], true)
		if err != nil {
			return nil, "", err
		}
		out = append(out, *r)
	}
	return out, next, nil
}

// Patch changes includeBody, batching or ttl; anything else in body is a
// 400 naming it (filter, delivery and consumption are immutable).
func (s *Service) Patch(ctx context.Context, tenant, id string, body []byte) (*Subscription, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, apierr.New(apierr.BadRequest, "invalid patch: "+err.Error())
	}
	for k := range raw {
		switch k {
		case "includeBody", "batching", "ttl":
		default:
			return nil, badField(k, "cannot be changed (only includeBody, batching and ttl can)")
		}
	}
	var p Patch
	if err := decodeStrict(body, &p); err != nil {
		return nil, err
	}
	rec, sp, err := s.load(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if p.IncludeBody != nil {
		sp.IncludeBody = *p.IncludeBody
	}
	if p.Batching != nil {
		sp.Batching = p.Batching
	}
	if p.TTL != nil {
		sp.TTL = *p.TTL
	}
	if err := sp.checkMutable(); err != nil {
		return nil, err
	}
	if rec.Spec, err = json.Marshal(sp); err != nil {
		return nil, fmt.Errorf("changefeed: encoding subscription: %w", err)
	}
	rec.IncludeBody = sp.IncludeBody
	if err := s.subs.UpdateSubscription(ctx, rec); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, notFound(id)
		}
		return nil, fmt.Errorf("changefeed: updating subscription: %w", err)
	}
	s.changed(ctx)
	return s.resource(ctx, rec, true)
}

// Delete removes a subscription.
func (s *Service) Delete(ctx context.Context, tenant, id string) error {
	if err := s.subs.DeleteSubscription(ctx, tenant, id); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return notFound(id)
		}
		return fmt.Errorf("changefeed: deleting subscription: %w", err)
	}
	s.dropWebhook(ctx, tenant, id)
	s.changed(ctx)
	return nil
}

// Sweep runs the feed's bounds; cmd/svc runs it periodically. In order:
//   - a durable subscription no consumer attached to (or stayed attached
//     to) within its ttl is deleted;
//   - a durable subscription whose backlog passed the ceiling (more
//     unacknowledged events than BacklogMaxEvents, or an unacknowledged
//     event older than the retention) is detached: marked with the
//     instant, the reason and its backlog, and a consumer attached to it
//     on any node is cut (Durable.Next returns ErrDetached at its next
//     check) and reconnects with Last-Event-ID, which acknowledges what
//     it received;
//   - the log is pruned: events older than the retention, and all but
//     the newest BacklogMaxEvents of each tenant's model. A detached
//     subscription that was not attached loses what was pruned; its mark
//     says so.
func (s *Service) Sweep(ctx context.Context) error {
	now := s.opt.Now()
	all, err := s.subs.AllSubscriptions(ctx)
	if err != nil {
		return fmt.Errorf("changefeed: sweep: %w", err)
	}
	gone := 0
	for i := range all {
		rec := &all[i]
		var sp Spec
		if json.Unmarshal(rec.Spec, &sp) != nil || sp.checkMutable() != nil {
			continue
		}
		if ttl := s.ttlOf(&sp); now.Sub(rec.AttachedAt) > ttl {
			if err := s.subs.DeleteSubscription(ctx, rec.Tenant, rec.ID); err == nil {
				s.dropWebhook(ctx, rec.Tenant, rec.ID)
				gone++
				s.opt.Log.Info("changefeed: subscription expired", "tenant", rec.Tenant, "id", rec.ID, "ttl", ttl)
			}
			continue
		}
		if sp.Delivery != DeliveryDurable {
			continue
		}
		if err := s.checkBacklog(ctx, rec, &sp, now); err != nil {
			return err
		}
	}
	if gone > 0 {
		s.changed(ctx)
	}
	if _, err := s.log.PruneChanges(ctx, now.Add(-s.opt.Retention), s.opt.BacklogMaxEvents); err != nil {
		return fmt.Errorf("changefeed: pruning the log: %w", err)
	}
	return nil
}

// Reasons a subscription is detached.
const (
	DetachedBacklogEvents = "BACKLOG_EVENTS"
	DetachedBacklogAge    = "BACKLOG_AGE"
)

// checkBacklog detaches rec when its backlog passed the ceiling.
func (s *Service) checkBacklog(ctx context.Context, rec *storage.Subscription, sp *Spec, now time.Time) error {
	n, oldest, err := s.log.ChangeLag(ctx, rec.Tenant, rec.Model, rec.Cursor)
	if err != nil {
		return fmt.Errorf("changefeed: sweep: measuring lag: %w", err)
	}
	reason := ""
	switch {
	case n > s.opt.BacklogMaxEvents:
		reason = DetachedBacklogEvents
	case n > 0 && oldest.Before(now.Add(-s.opt.Retention)):
		reason = DetachedBacklogAge
	default:
		return nil
	}
	sp.Detached = &Detached{At: now.UTC(), Reason: reason, Events: n}
	if rec.Spec, err = json.Marshal(sp); err != nil {
		return fmt.Errorf("changefeed: encoding subscription: %w", err)
	}
	if err := s.subs.UpdateSubscription(ctx, rec); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("changefeed: sweep: marking a subscription: %w", err)
	}
	s.opt.Log.Warn("changefeed: subscription detached: its backlog passed the ceiling", "tenant", rec.Tenant, "id", rec.ID,
		"reason", reason, "events", n, "maxEvents", s.opt.BacklogMaxEvents, "retention", s.opt.Retention)
	return nil
}

// ttlOf is how long sp lives with no consumer attached.
func (s *Service) ttlOf(sp *Spec) time.Duration {
	if sp.ttl > 0 {
		return sp.ttl
	}
	return s.opt.DefaultTTL
}

// Totals is the feed's state for /metrics.
type Totals struct {
	Subscriptions int
	// Unacknowledged sums the durable subscriptions' lag; OldestAge is
	// the largest age of an unacknowledged event.
	Unacknowledged int64
	OldestAge      time.Duration
}

// Metrics measures every durable subscription's lag.
func (s *Service) Metrics(ctx context.Context) (Totals, error) {
	all, err := s.subs.AllSubscriptions(ctx)
	if err != nil {
		return Totals{}, fmt.Errorf("changefeed: metrics: %w", err)
	}
	t := Totals{Subscriptions: len(all)}
	now := s.opt.Now()
	for i := range all {
		rec := &all[i]
		var sp Spec
		if json.Unmarshal(rec.Spec, &sp) != nil || sp.Delivery == DeliveryLiveOnly {
			continue
		}
		n, oldest, err := s.log.ChangeLag(ctx, rec.Tenant, rec.Model, rec.Cursor)
		if err != nil {
			return Totals{}, fmt.Errorf("changefeed: metrics: %w", err)
		}
		t.Unacknowledged += n
		if n > 0 {
			t.OldestAge = max(t.OldestAge, now.Sub(oldest))
		}
	}
	return t, nil
}
