package switches

import (
	"log/slog"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"svc/platform/apierr"
)

func f(v float64) *float64 { return &v }

func TestParseSamplerBody(t *testing.T) {
	for _, tc := range []struct {
		body  string
		want  SamplerConfig
		param string // "" when accepted
	}{
		{`{"sampler":"always"}`, SamplerConfig{Sampler: "always", ParentBased: true}, ""},
		{`{"sampler":"never","parent_based":false}`, SamplerConfig{Sampler: "never"}, ""},
		{`{"sampler":"ratio","ratio":0.25}`, SamplerConfig{Sampler: "ratio", Ratio: f(0.25), ParentBased: true}, ""},
		{`{"sampler":"ratio","ratio":1}`, SamplerConfig{Sampler: "ratio", Ratio: f(1), ParentBased: true}, ""},
		{`{"sampler":"sometimes"}`, SamplerConfig{}, "sampler"},
		{`{"sampler":"ALWAYS"}`, SamplerConfig{}, "sampler"},
		{`{"ratio":0.5}`, SamplerConfig{}, "sampler"},
		{`{"sampler":"ratio"}`, SamplerConfig{}, "ratio"},
		{`{"sampler":"ratio","ratio":0}`, SamplerConfig{}, "ratio"},
		{`{"sampler":"ratio","ratio":1.5}`, SamplerConfig{}, "ratio"},
		{`{"sampler":"ratio","ratio":-0.1}`, SamplerConfig{}, "ratio"},
		{`{"sampler":"always","ratio":0.5}`, SamplerConfig{}, "ratio"},
		{``, SamplerConfig{}, "-"},
		{`{"sampler":1}`, SamplerConfig{}, "-"},
		{`[]`, SamplerConfig{}, "-"},
	} {
		got, err := ParseSamplerBody([]byte(tc.body))
		if tc.param == "" {
			if err != nil || got.Sampler != tc.want.Sampler || got.ParentBased != tc.want.ParentBased ||
				(got.Ratio == nil) != (tc.want.Ratio == nil) || (got.Ratio != nil && *got.Ratio != *tc.want.Ratio) {
				t.Errorf("%s: %+v %v, want %+v", tc.body, got, err, tc.want)
			}
			continue
		}
		e, ok := apierr.As(err)
		if !ok || e.Code != apierr.BadRequest {
			t.Errorf("%s: %v, want 400 BAD_REQUEST", tc.body, err)
			continue
		}
		if tc.param != "-" && !strings.Contains(e.Error(), tc.param) {
			t.Errorf("%s: %v does not name %s", tc.body, err, tc.param)
		}
	}
}

func TestLevels(t *testing.T) {
	sw := New(nil, DefaultSampler, slog.New(slog.DiscardHandler))
	if got := sw.Level().Level; got != "info" {
		t.Fatalf("initial level %q", got)
	}
	for _, tc := range []struct{ in, want, prev string }{
		{"debug", "debug", "info"}, {"WARNING", "warn", "debug"}, {"error", "error", "warn"},
		{"verbose", "info", "error"}, // unknown means info, as the compatible system answers
	} {
		if v := sw.SetLevel(tc.in); v.Level != tc.want || v.Previous != tc.prev {
			t.Errorf("SetLevel(%q) = %+v, want %s after %s", tc.in, v, tc.want, tc.prev)
		}
	}
	for _, tc := range []struct{ body, level string }{{`{"level":"debug"}`, "debug"}, {`{"level":"nope"}`, "info"}} {
		if l, err := ParseLevelBody([]byte(tc.body)); err != nil || l != tc.level {
			t.Errorf("%s: %q %v", tc.body, l, err)
		}
	}
	for _, body := range []string{``, `{}`, `{"level":3}`, `nope`} {
		if _, err := ParseLevelBody([]byte(body)); err == nil {
			t.Errorf("%q accepted", body)
		}
	}
}

func TestSamplerFromEnv(t *testing.T) {
	for _, tc := range []struct {
		sampler, arg string
		want         SamplerConfig
		warn         bool
	}{
		{"", "", DefaultSampler, false},
		{"always_on", "", SamplerConfig{Sampler: "always"}, false},
		{"parentbased_always_off", "", SamplerConfig{Sampler: "never", ParentBased: true}, false},
		{"traceidratio", "0.1", SamplerConfig{Sampler: "ratio", Ratio: f(0.1)}, false},
		{"parentbased_traceidratio", "", SamplerConfig{Sampler: "ratio", Ratio: f(1), ParentBased: true}, false},
		{"traceidratio", "2", SamplerConfig{Sampler: "ratio", Ratio: f(1)}, true},
		{"jaeger_remote", "", DefaultSampler, true},
	} {
		env := map[string]string{"OTEL_TRACES_SAMPLER": tc.sampler, "OTEL_TRACES_SAMPLER_ARG": tc.arg}
		got, warn := SamplerFromEnv(func(k string) string { return env[k] })
		if got.Sampler != tc.want.Sampler || got.ParentBased != tc.want.ParentBased || (warn != "") != tc.warn ||
			(got.Ratio == nil) != (tc.want.Ratio == nil) || (got.Ratio != nil && *got.Ratio != *tc.want.Ratio) {
			t.Errorf("%s/%s: %+v %q", tc.sampler, tc.arg, got, warn)
		}
	}
}

// TestDynamicSamplerFollowsChanges: the sampler the tracer provider holds
// decides with the configuration of the moment.
func TestDynamicSamplerFollowsChanges(t *testing.T) {
	sw := New(nil, SamplerConfig{Sampler: "never"}, slog.New(slog.DiscardHandler))
	s := sw.Sampler()
	p := sdktrace.SamplingParameters{TraceID: trace.TraceID{1}, Name: "x"}
	if d := s.ShouldSample(p).Decision; d != sdktrace.Drop {
		t.Fatalf("never: %v", d)
	}
	sw.SetSampler(SamplerConfig{Sampler: "always"})
	if d := s.ShouldSample(p).Decision; d != sdktrace.RecordAndSample {
		t.Fatalf("always: %v", d)
	}
}

// memBus is a bus of several nodes in one process: Publish hands the
// payload to every subscriber, the sender's included, as cluster.Gossip
// does.
type memBus struct {
	mu   sync.Mutex
	subs []func([]byte)
}

func (b *memBus) Publish(_ string, p []byte) error {
	b.mu.Lock()
	subs := append([]func([]byte){}, b.subs...)
	b.mu.Unlock()
	for _, fn := range subs {
		fn(p)
	}
	return nil
}

func (b *memBus) Subscribe(_ string, fn func([]byte)) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs = append(b.subs, fn)
	return func() {}
}

func TestClusterScopeReachesEveryNode(t *testing.T) {
	bus := &memBus{}
	quiet := slog.New(slog.DiscardHandler)
	a, b := New(nil, DefaultSampler, quiet), New(nil, DefaultSampler, quiet)
	ca, stopA := Join(a, bus, "a")
	defer stopA()
	_, stopB := Join(b, bus, "b")
	defer stopB()
	if v, err := ca.SetLevel("debug"); err != nil || v.Level != "debug" || v.Previous != "info" {
		t.Fatalf("cluster SetLevel: %+v %v", v, err)
	}
	if got := b.Level().Level; got != "debug" {
		t.Fatalf("other node's level %q", got)
	}
	if _, err := ca.SetSampler(SamplerConfig{Sampler: "ratio", Ratio: f(0.5)}); err != nil {
		t.Fatal(err)
	}
	if got := b.SamplerConfig(); got.Sampler != "ratio" || *got.Ratio != 0.5 || got.ParentBased {
		t.Fatalf("other node's sampler %+v", got)
	}
	// A node-scope change stays on its node.
	a.SetLevel("error")
	if got := b.Level().Level; got != "debug" {
		t.Fatalf("node-scope change reached the other node: %q", got)
	}
}
