package switches

import (
	"log/slog"
	"sync"
	"sync/atomic"

	json "github.com/goccy/go-json"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Switches is one node's log level and trace sampler. Safe for concurrent
// use.
type Switches struct {
	level *slog.LevelVar
	log   *slog.Logger

	mu      sync.Mutex // serialises changes, so Previous is exact
	sampler atomic.Pointer[samplerState]
}

type samplerState struct {
	cfg SamplerConfig
	s   sdktrace.Sampler
}

// New returns the switches over level (the LevelVar the process logger's
// handler reads) and the initial sampler configuration. log receives one
// line per change.
func New(level *slog.LevelVar, initial SamplerConfig, log *slog.Logger) *Switches {
	if level == nil {
		level = new(slog.LevelVar)
	}
	if log == nil {
		log = slog.Default()
	}
	if initial.check() != nil {
		initial = DefaultSampler
	}
	sw := &Switches{level: level, log: log}
	sw.sampler.Store(&samplerState{cfg: initial, s: initial.build()})
	return sw
}

// Level is the current level.
func (sw *Switches) Level() LevelView { return LevelView{Level: levelName(sw.level.Level())} }

// SetLevel sets the level by name (an unknown name is info) and returns
// the new level with the previous one.
func (sw *Switches) SetLevel(name string) LevelView {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	prev := levelName(sw.level.Level())
	sw.level.Set(parseLevel(name))
	v := LevelView{Level: levelName(sw.level.Level()), Previous: prev}
	sw.log.Info("log level changed", "level", v.Level, "previous", v.Previous)
	return v
}

// SamplerConfig is the current sampler configuration.
func (sw *Switches) SamplerConfig() SamplerConfig { return sw.sampler.Load().cfg }

// SetSampler installs c, which ParseSamplerBody checked; new root spans
// are sampled by it at once.
func (sw *Switches) SetSampler(c SamplerConfig) SamplerConfig {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if c.Ratio != nil {
		r := *c.Ratio
		c.Ratio = &r
	}
	sw.sampler.Store(&samplerState{cfg: c, s: c.build()})
	sw.log.Info("trace sampler changed", "sampler", c.Sampler, "parent_based", c.ParentBased)
	return c
}

// Sampler is the SDK sampler reading the current configuration on every
// decision, for the tracer provider.
func (sw *Switches) Sampler() sdktrace.Sampler { return dynamic{sw} }

type dynamic struct{ sw *Switches }

func (d dynamic) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return d.sw.sampler.Load().s.ShouldSample(p)
}

func (d dynamic) Description() string { return "svc runtime sampler" }

var _ sdktrace.Sampler = dynamic{}

// Topic is the cluster bus topic of switch changes made with
// scope=cluster.
const Topic = "admin.switches"

// Bus is the part of the cluster bus the switches use (cluster.Bus).
type Bus interface {
	Publish(topic string, payload []byte) error
	Subscribe(topic string, fn func(payload []byte)) (cancel func())
}

// change is the payload of Topic: one of Level or Sampler.
type change struct {
	Node    string         `json:"node"`
	Level   string         `json:"level,omitempty"`
	Sampler *SamplerConfig `json:"sampler,omitempty"`
}

// Cluster broadcasts this node's scope=cluster changes and applies the
// other nodes'.
type Cluster struct {
	sw   *Switches
	bus  Bus
	self string
}

// Join subscribes sw to the other nodes' changes on bus; self is this
// node's id (its own broadcasts are applied before they are sent). stop
// unsubscribes.
func Join(sw *Switches, bus Bus, self string) (c *Cluster, stop func()) {
	c = &Cluster{sw: sw, bus: bus, self: self}
	stop = bus.Subscribe(Topic, func(p []byte) {
		var ch change
		if err := json.Unmarshal(p, &ch); err != nil || ch.Node == self {
			return
		}
		switch {
		case ch.Sampler != nil:
			if ch.Sampler.check() == nil {
				sw.SetSampler(*ch.Sampler)
			}
		case ch.Level != "":
			sw.SetLevel(ch.Level)
		}
	})
	return c, stop
}

// SetLevel applies the level here, then sends it to every other node.
func (c *Cluster) SetLevel(name string) (LevelView, error) {
	v := c.sw.SetLevel(name)
	b, _ := json.Marshal(change{Node: c.self, Level: v.Level})
	return v, c.bus.Publish(Topic, b)
}

// SetSampler applies cfg here, then sends it to every other node.
func (c *Cluster) SetSampler(cfg SamplerConfig) (SamplerConfig, error) {
	v := c.sw.SetSampler(cfg)
	b, _ := json.Marshal(change{Node: c.self, Sampler: &v})
	return v, c.bus.Publish(Topic, b)
}
