package changefeed

import (
	"bytes"
	"strconv"
	"time"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// Delivery and consumption modes.
const (
	DeliveryDurable  = "DURABLE"
	DeliveryLiveOnly = "LIVE_ONLY"
	ConsumeBroadcast = "BROADCAST"
)

// DefaultTTL is how long a durable subscription lives without an attached
// consumer unless its ttl or the service's Options.DefaultTTL says
// otherwise.
const DefaultTTL = 30 * 24 * time.Hour

// Batching groups events for the doors that batch (webhooks).
type Batching struct {
	WindowMs  int `json:"windowMs"`
	MaxEvents int `json:"maxEvents"`
}

// Spec is a subscription's definition as a client writes it. Filter,
// delivery and consumption are immutable; ttl, batching and includeBody
// may be patched and apply forward.
type Spec struct {
	Filter             Filter     `json:"filter"`
	Delivery           string     `json:"delivery,omitempty"`
	Consumption        string     `json:"consumption,omitempty"`
	IncludeBody        string     `json:"includeBody,omitempty"`
	Batching           *Batching  `json:"batching,omitempty"`
	StartFromTimestamp *time.Time `json:"startFromTimestamp,omitempty"`
	// TTL is a Go duration ("720h"): a durable subscription no consumer
	// attached to for this long is deleted.
	TTL string `json:"ttl,omitempty"`
	// Detached is set by the sweep when the backlog passed the ceiling
	// (Service.Sweep); a client cannot set it.
	Detached *Detached `json:"detached,omitempty"`
	// Webhook names an HTTPS receiver the events are POSTed to (webhook.go).
	Webhook *WebhookSpec `json:"webhook,omitempty"`

	ttl time.Duration // 0: the service's default
}

// Detached says when and why a durable subscription's backlog passed the
// ceiling: its consumer was cut, and events past the ceiling are pruned
// from the log (a consumer that was not attached does not receive them).
type Detached struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	// Events is the backlog (unacknowledged events) at that instant.
	Events int64 `json:"events"`
}

// decodeStrict reads a JSON object refusing unknown members, so a typo
// in an option is a 400 rather than a default silently taken.
func decodeStrict(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return apierr.New(apierr.BadRequest, "invalid subscription: "+err.Error())
	}
	return nil
}

// check fills defaults and validates everything but startFrom's
// retention, which needs the clock.
func (s *Spec) check() error {
	if err := s.Filter.Compile("filter"); err != nil {
		return err
	}
	if s.Delivery == "" {
		s.Delivery = DeliveryDurable
	}
	if s.Delivery != DeliveryDurable && s.Delivery != DeliveryLiveOnly {
		return badField("delivery", "unknown value "+strconv.Quote(s.Delivery)+"; valid: DURABLE, LIVE_ONLY")
	}
	if s.Consumption == "" {
		s.Consumption = ConsumeBroadcast
	}
	if s.Consumption != ConsumeBroadcast {
		return badField("consumption", "only BROADCAST is supported (GROUP consumption is not built)")
	}
	if err := s.checkMutable(); err != nil {
		return err
	}
	if s.StartFromTimestamp != nil && s.Delivery != DeliveryDurable {
		return badField("startFromTimestamp", "only a DURABLE subscription starts in the past")
	}
	return nil
}

// checkMutable validates the members PATCH may change.
func (s *Spec) checkMutable() error {
	if s.IncludeBody == "" {
		s.IncludeBody = BodyNone
	}
	switch s.IncludeBody {
	case BodyNone, BodyAfter, BodyBeforeAndAter:
	default:
		return badField("includeBody", "unknown value "+strconv.Quote(s.IncludeBody)+"; valid: NONE, AFTER, BEFORE_AND_AFTER")
	}
	if b := s.Batching; b != nil && (b.WindowMs < 0 || b.MaxEvents < 0) {
		return badField("batching", "windowMs and maxEvents cannot be negative")
	}
	s.ttl = 0
	if s.TTL != "" {
		d, err := time.ParseDuration(s.TTL)
		if err != nil || d < time.Minute {
			return badField("ttl", "a duration of at least 1m, like \"720h\"")
		}
		s.ttl = d
	}
	return nil
}

// Patch is what PATCH may change.
type Patch struct {
	IncludeBody *string   `json:"includeBody"`
	Batching    *Batching `json:"batching"`
	TTL         *string   `json:"ttl"`
}

// Lag is what a subscription has not acknowledged.
type Lag struct {
	// Events not yet acknowledged that pass the model key (the filter's
	// other conditions are applied on delivery).
	Events int64 `json:"events"`
	// OldestAgeMs is the age of the oldest of them; absent with none.
	OldestAgeMs *int64 `json:"oldestAgeMs,omitempty"`
}

// Subscription is the resource the management API returns.
type Subscription struct {
	ID string `json:"id"`
	Spec
	Cursor         string     `json:"cursor"`
	CreatedAt      time.Time  `json:"createdAt"`
	LastAttachedAt *time.Time `json:"lastAttachedAt,omitempty"`
	Lag            *Lag       `json:"lag,omitempty"`
}
