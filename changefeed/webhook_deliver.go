package changefeed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/platform/netguard"
	"svc/storage"
)

// Deliverer is this node's webhook door: one worker per subscription that
// names a webhook, each delivering only while this node holds that
// subscription's lease (storage.Webhooks.ClaimWebhook), so in a cluster
// one node at a time delivers a given subscription and another takes it
// over within a lease when that node dies.
type Deliverer struct {
	svc    *Service
	hub    *Hub
	opt    *WebhookOptions
	log    *slog.Logger
	client *http.Client

	kick chan struct{}
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	workers map[[2]string]*worker
	once    sync.Once
}

// NewDeliverer returns the deliverer of svc's webhook subscriptions, fed
// by hub; Start runs it. svc must have a webhook store.
func NewDeliverer(svc *Service, hub *Hub) *Deliverer {
	d := &Deliverer{svc: svc, hub: hub, opt: &svc.opt.Webhook, log: svc.opt.Log, client: netguard.NewClient(svc.opt.Webhook.Net),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), workers: map[[2]string]*worker{}}
	return d
}

// Start runs the deliverer until Stop.
func (d *Deliverer) Start() {
	k := d.Kick
	d.svc.kick.Store(&k)
	go d.run()
}

// Stop ends every worker (a request in flight is abandoned: its batch is
// not acknowledged and goes again) and gives their leases up.
func (d *Deliverer) Stop() {
	d.once.Do(func() {
		d.svc.kick.Store(nil)
		close(d.stop)
		<-d.done
	})
}

// Kick rereads the subscriptions now.
func (d *Deliverer) Kick() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

func (d *Deliverer) run() {
	defer close(d.done)
	t := time.NewTicker(d.opt.Rescan)
	defer t.Stop()
	for {
		d.scan()
		select {
		case <-d.stop:
			d.mu.Lock()
			for k, w := range d.workers {
				w.cancel()
				<-w.done
				delete(d.workers, k)
			}
			d.mu.Unlock()
			return
		case <-d.kick:
		case <-t.C:
		}
	}
}

// scan starts a worker for every webhook subscription without one,
// restarts one whose definition changed (a PATCH applies forward) and
// stops those whose subscription is gone.
func (d *Deliverer) scan() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all, err := d.svc.subs.AllSubscriptions(ctx)
	if err != nil {
		d.log.Warn("changefeed: webhooks: reading subscriptions", "error", err)
		return
	}
	want := map[[2]string]*storage.Subscription{}
	for i := range all {
		rec := &all[i]
		if !bytes.Contains(rec.Spec, []byte(`"webhook"`)) {
			continue
		}
		want[[2]string{rec.Tenant, rec.ID}] = rec
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, w := range d.workers {
		if rec, ok := want[k]; !ok || !bytes.Equal(rec.Spec, w.spec) {
			w.cancel()
			<-w.done
			delete(d.workers, k)
		}
	}
	for k, rec := range want {
		if _, ok := d.workers[k]; ok {
			continue
		}
		select {
		case <-d.stop:
			return
		default:
		}
		wctx, wcancel := context.WithCancel(context.Background())
		w := &worker{d: d, tenant: rec.Tenant, id: rec.ID, spec: rec.Spec, cancel: wcancel, done: make(chan struct{})}
		d.workers[k] = w
		go w.run(wctx)
	}
}

// worker delivers one subscription.
type worker struct {
	d      *Deliverer
	tenant string
	id     string
	spec   []byte
	cancel context.CancelFunc
	done   chan struct{}

	// While this node holds the lease:
	reader   *Durable
	url      string
	sign     *signer
	state    storage.Webhook
	maxEv    int
	window   time.Duration
	carry    []Event              // read but not yet sent
	carryEnd storage.ChangeCursor // the reader's cursor after carry
	stamped  time.Time
}

// batch is one request: its events, the cursor acknowledged once the
// receiver takes it, and its webhook-id (the same on every retry).
type batch struct {
	id   string
	body []byte
	ack  storage.ChangeCursor
	n    int
}

func (w *worker) log() *slog.Logger { return w.d.log.With("tenant", w.tenant, "subscription", w.id) }

func (w *worker) run(ctx context.Context) {
	defer close(w.done)
	defer w.drop()
	o := w.d.opt
	for ctx.Err() == nil {
		held, err := w.claim(ctx)
		if errors.Is(err, storage.ErrNotFound) {
			return // deleted
		}
		if err != nil || !held {
			if err != nil && ctx.Err() == nil {
				w.log().Warn("changefeed: webhooks: claiming delivery", "error", err)
			}
			w.drop()
			if !w.sleep(ctx, o.Lease/3) {
				return
			}
			continue
		}
		if w.reader == nil {
			if err := w.attach(ctx); err != nil {
				if errors.Is(err, storage.ErrNotFound) {
					return
				}
				w.log().Warn("changefeed: webhooks: attaching", "error", err)
				w.drop()
				if !w.sleep(ctx, o.Lease/3) {
					return
				}
				continue
			}
			// Another node (or this one before a restart) may have set a
			// retry time: it is kept.
			if wait := w.state.NextAttemptAt.Sub(w.d.svc.opt.Now()); w.state.ConsecutiveFailures > 0 && wait > 0 {
				if !w.wait(ctx, wait) {
					continue
				}
			}
		}
		b, err := w.next(ctx, o.Lease/3)
		if errors.Is(err, ErrStopped) || errors.Is(err, ErrGone) {
			return
		}
		if err != nil {
			// ErrDetached (the backlog passed the ceiling) reattaches from
			// the acknowledged cursor, as a Server-Sent Events consumer that
			// reconnects does.
			if ctx.Err() == nil {
				w.log().Warn("changefeed: webhooks: reading the change log", "error", err)
				w.drop()
				w.sleep(ctx, o.BackoffMin)
			}
			continue
		}
		if b == nil {
			w.stampIdle(ctx)
			continue
		}
		w.deliver(ctx, b)
	}
}

// claim takes or renews the lease.
func (w *worker) claim(ctx context.Context) (bool, error) {
	now := w.d.svc.opt.Now()
	cctx, cancel := context.WithTimeout(ctx, w.d.opt.Timeout)
	defer cancel()
	return w.d.opt.Store.ClaimWebhook(cctx, w.tenant, w.id, w.d.opt.Node, now, now.Add(w.d.opt.Lease))
}

// attach starts reading the subscription from its acknowledged cursor.
func (w *worker) attach(ctx context.Context) error {
	rec, sp, err := w.d.svc.load(ctx, w.tenant, w.id)
	if err != nil {
		if e, ok := apierr.As(err); ok && e.Code == apierr.NotFound {
			return storage.ErrNotFound
		}
		return err
	}
	if sp.Webhook == nil {
		return storage.ErrNotFound
	}
	st, err := w.d.opt.Store.GetWebhook(ctx, w.tenant, w.id)
	if err != nil {
		return err
	}
	key, err := webhookKey(st.Secret)
	if err != nil {
		return err
	}
	w.url, w.sign, w.state = sp.Webhook.URL, newSigner(key), *st
	w.state.Secret = ""
	w.maxEv = w.d.opt.MaxEvents
	w.window = 0
	if b := sp.Batching; b != nil {
		if b.MaxEvents > 0 {
			w.maxEv = min(w.maxEv, b.MaxEvents)
		}
		w.window = time.Duration(b.WindowMs) * time.Millisecond
	}
	w.reader = &Durable{hub: w.d.hub, tenant: w.tenant, id: w.id, model: rec.Model, filter: &sp.Filter, body: sp.IncludeBody, cursor: rec.Cursor,
		attached: w.d.svc.opt.Now().UTC(), touched: time.Now(), detach: w.d.hub.Attached()}
	w.carry, w.carryEnd = nil, rec.Cursor
	return nil
}

// drop detaches the reader and gives the lease up: whatever was read and
// not acknowledged is read again by whoever delivers next.
func (w *worker) drop() {
	if w.reader == nil {
		return
	}
	w.reader.Close()
	w.reader, w.carry, w.sign = nil, nil, nil
	ctx, cancel := context.WithTimeout(context.Background(), w.d.opt.Timeout)
	defer cancel()
	if err := w.d.opt.Store.ReleaseWebhook(ctx, w.tenant, w.id, w.d.opt.Node); err != nil {
		w.log().Warn("changefeed: webhooks: releasing delivery", "error", err)
	}
}

// sleep waits d (real time: lease and error pacing, not a retry) unless
// ctx ends first.
func (w *worker) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// wait is a retry wait through WebhookOptions.After, renewing the lease
// meanwhile; false when the lease was lost or ctx ended.
func (w *worker) wait(ctx context.Context, d time.Duration) bool {
	fire := w.d.opt.After(d)
	renew := time.NewTicker(w.d.opt.Lease / 3)
	defer renew.Stop()
	for {
		select {
		case <-fire:
			return true
		case <-ctx.Done():
			return false
		case <-renew.C:
			if held, err := w.claim(ctx); err != nil || !held {
				w.drop()
				return false
			}
		}
	}
}

// stampIdle counts a healthy, idle receiver as an attached consumer
// (at most once per lease), so a quiet model's subscription is not
// taken for abandoned by the ttl sweep. A failing receiver is not
// stamped: one that fails for the whole ttl loses its subscription.
func (w *worker) stampIdle(ctx context.Context) {
	now := w.d.svc.opt.Now()
	if w.state.ConsecutiveFailures > 0 || now.Sub(w.stamped) < w.d.opt.Lease {
		return
	}
	if err := w.d.svc.subs.AckSubscription(ctx, w.tenant, w.id, w.carryEnd, now.UTC()); err == nil {
		w.stamped = now
	}
}

// next returns the next batch, waiting up to wait for events (nil when
// none came).
func (w *worker) next(ctx context.Context, wait time.Duration) (*batch, error) {
	if len(w.carry) == 0 {
		evs, err := w.reader.Next(ctx, wait)
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 {
			// Events the filter passed over are behind the reader too.
			w.carryEnd = w.reader.Cursor()
			return nil, nil
		}
		w.carry, w.carryEnd = evs, w.reader.Cursor()
		if w.window > 0 {
			until := time.Now().Add(w.window)
			for len(w.carry) < w.maxEv {
				left := time.Until(until)
				if left <= 0 {
					break
				}
				more, err := w.reader.Next(ctx, left)
				if err != nil || len(more) == 0 {
					break
				}
				w.carry, w.carryEnd = append(w.carry, more...), w.reader.Cursor()
			}
		}
	}
	return w.cut()
}

// cut takes the first events of carry that fit one request.
func (w *worker) cut() (*batch, error) {
	body := make([]byte, 0, 4096)
	body = append(body, `{"type":"entity.changes","data":{"subscriptionId":`...)
	body = strconv.AppendQuote(body, w.id)
	body = append(body, `,"events":[`...)
	n, size := 0, 0
	for n < len(w.carry) && n < w.maxEv {
		ev, err := json.Marshal(&w.carry[n])
		if err != nil {
			return nil, fmt.Errorf("changefeed: encoding an event: %w", err)
		}
		if n > 0 && size+len(ev) > w.d.opt.MaxBytes {
			break
		}
		if n > 0 {
			body = append(body, ',')
		}
		body = append(body, ev...)
		size += len(ev)
		n++
	}
	body = append(body, "]}}"...)
	b := &batch{body: body, n: n, ack: w.carryEnd}
	if n < len(w.carry) {
		c, err := storage.ParseChangeCursor(w.carry[n-1].Cursor)
		if err != nil {
			return nil, err
		}
		b.ack = c
	}
	// The id names the batch's content (its first and last event), so a
	// batch sent again after a restart has the same id.
	b.id = "msg_" + w.id + "_" + w.carry[0].Cursor + "_" + w.carry[n-1].Cursor
	w.carry = w.carry[n:]
	return b, nil
}

// deliver sends b until the receiver takes it (then acknowledges it),
// the lease is lost or the worker stops.
func (w *worker) deliver(ctx context.Context, b *batch) {
	o := w.d.opt
	for ctx.Err() == nil {
		ra, hasRA, err := w.post(ctx, b)
		now := w.d.svc.opt.Now().UTC()
		if err == nil {
			if aerr := w.d.svc.subs.AckSubscription(ctx, w.tenant, w.id, b.ack, now); aerr != nil {
				if errors.Is(aerr, storage.ErrNotFound) {
					w.cancel()
					return
				}
				w.log().Warn("changefeed: webhooks: acknowledging", "error", aerr)
			}
			w.stamped = now
			if w.state.ConsecutiveFailures > 0 || w.state.Failing {
				w.state.ConsecutiveFailures, w.state.Failing = 0, false
				w.state.LastAttemptAt, w.state.NextAttemptAt = now, time.Time{}
				w.record(ctx)
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		w.state.ConsecutiveFailures++
		w.state.Failing = w.state.Failing || w.state.ConsecutiveFailures >= o.FailingAfter
		wait := o.retryWait(w.state.ConsecutiveFailures, ra, hasRA)
		w.state.LastError, w.state.LastAttemptAt, w.state.NextAttemptAt = err.Error(), now, now.Add(wait)
		w.record(ctx)
		if w.state.ConsecutiveFailures == o.FailingAfter {
			w.log().Warn("changefeed: webhook receiver marked failing", "failures", w.state.ConsecutiveFailures, "error", err)
		} else {
			w.log().Debug("changefeed: webhook delivery failed", "failures", w.state.ConsecutiveFailures, "retryIn", wait, "error", err)
		}
		if !w.wait(ctx, wait) {
			// Lease lost or stopping: whoever delivers next reads the batch
			// again from the acknowledged cursor.
			w.drop()
			return
		}
	}
}

func (w *worker) record(ctx context.Context) {
	st := w.state
	st.Tenant, st.ID = w.tenant, w.id
	if err := w.d.opt.Store.RecordWebhook(ctx, &st); err != nil && !errors.Is(err, storage.ErrNotFound) {
		w.log().Warn("changefeed: webhooks: recording delivery state", "error", err)
	}
}

// post makes one attempt: signed now, bounded by the timeout. It returns
// the receiver's Retry-After when it sent one.
func (w *worker) post(ctx context.Context, b *batch) (time.Duration, bool, error) {
	o := w.d.opt
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	now := w.d.svc.opt.Now()
	ts := now.Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(b.body))
	if err != nil {
		return 0, false, fmt.Errorf("invalid webhook URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "svc-webhooks")
	req.Header.Set("webhook-id", b.id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", w.sign.sign(b.id, ts, b.body))
	resp, err := w.d.client.Do(req)
	if err != nil {
		return 0, false, describeDeliveryError(err)
	}
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return 0, false, nil
	}
	ra, has := parseRetryAfter(resp.Header.Get("Retry-After"), now)
	msg := "HTTP " + strconv.Itoa(resp.StatusCode)
	if s := printable(snippet, 200); s != "" {
		msg += ": " + s
	}
	return ra, has, errors.New(msg)
}

// describeDeliveryError is a transport failure as the resource shows it:
// without the URL (it is on the resource already) and naming the SSRF
// guard and the timeouts.
func describeDeliveryError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		return fmt.Errorf("refused by the SSRF guard: %w", err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, netguard.ErrConnectTimeout), errors.Is(err, netguard.ErrReadTimeout):
		return fmt.Errorf("timed out: %w", err)
	}
	return err
}

// printable is the start of a receiver's answer, as valid UTF-8 text on
// one line, at most n bytes.
func printable(b []byte, n int) string {
	out := make([]byte, 0, min(len(b), n))
	for len(b) > 0 && len(out) < n {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch {
		case r == utf8.RuneError:
			continue
		case r < 0x20 || r == 0x7f:
			r = ' '
		}
		out = utf8.AppendRune(out, r)
	}
	return string(bytes.TrimSpace(out))
}
