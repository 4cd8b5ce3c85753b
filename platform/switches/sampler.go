package switches

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"svc/platform/apierr"
)

// Sampler kinds of the trace-sampler API.
const (
	SamplerAlways = "always"
	SamplerNever  = "never"
	SamplerRatio  = "ratio"
)

// SamplerConfig is the body of GET|POST {ctx}/admin/trace-sampler: which
// traces svc records. Ratio is set with SamplerRatio only, in (0, 1];
// ParentBased follows the caller's sampling decision when a request carries
// one (traceparent) and applies Sampler to the others.
type SamplerConfig struct {
	Sampler     string   `json:"sampler"`
	Ratio       *float64 `json:"ratio,omitempty"`
	ParentBased bool     `json:"parent_based"`
}

// DefaultSampler is the OpenTelemetry SDK's default, parentbased_always_on.
var DefaultSampler = SamplerConfig{Sampler: SamplerAlways, ParentBased: true}

// ParseSamplerBody reads and checks a POST body: sampler is required and one
// of always, never, ratio (400 BAD_REQUEST otherwise); ratio is required
// with ratio and refused with the others; parent_based defaults to true.
func ParseSamplerBody(body []byte) (SamplerConfig, error) {
	var in struct {
		Sampler     *string  `json:"sampler"`
		Ratio       *float64 `json:"ratio"`
		ParentBased *bool    `json:"parent_based"`
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return SamplerConfig{}, apierr.New(apierr.BadRequest, `request body is required: {"sampler": "always|never|ratio", "ratio": 0.1, "parent_based": true}`)
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return SamplerConfig{}, apierr.New(apierr.BadRequest, "invalid request body: "+err.Error())
	}
	if in.Sampler == nil {
		return SamplerConfig{}, apierr.New(apierr.BadRequest, "sampler is required", apierr.P("parameter", "sampler"))
	}
	c := SamplerConfig{Sampler: *in.Sampler, Ratio: in.Ratio, ParentBased: in.ParentBased == nil || *in.ParentBased}
	if err := c.check(); err != nil {
		return SamplerConfig{}, err
	}
	return c, nil
}

func (c SamplerConfig) check() error {
	switch c.Sampler {
	case SamplerAlways, SamplerNever:
		if c.Ratio != nil {
			return apierr.New(apierr.BadRequest, "ratio is only accepted with sampler \"ratio\"", apierr.P("parameter", "ratio"))
		}
	case SamplerRatio:
		if c.Ratio == nil {
			return apierr.New(apierr.BadRequest, "sampler \"ratio\" needs ratio, in (0, 1]", apierr.P("parameter", "ratio"))
		}
		if !(*c.Ratio > 0 && *c.Ratio <= 1) {
			return apierr.New(apierr.BadRequest, fmt.Sprintf("ratio must be above 0 and at most 1, got %v", *c.Ratio), apierr.P("parameter", "ratio"))
		}
	default:
		return apierr.New(apierr.BadRequest, fmt.Sprintf("unknown sampler %q: use always, never or ratio", c.Sampler), apierr.P("parameter", "sampler"))
	}
	return nil
}

// build is the SDK sampler of c.
func (c SamplerConfig) build() sdktrace.Sampler {
	var s sdktrace.Sampler
	switch c.Sampler {
	case SamplerNever:
		s = sdktrace.NeverSample()
	case SamplerRatio:
		s = sdktrace.TraceIDRatioBased(*c.Ratio)
	default:
		s = sdktrace.AlwaysSample()
	}
	if c.ParentBased {
		s = sdktrace.ParentBased(s)
	}
	return s
}

// SamplerFromEnv reads the initial sampler from the standard
// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, as the SDK would: the
// six standard values (always_on, always_off, traceidratio and their
// parentbased_ forms), the ratio defaulting to 1. Anything else gives the
// default and a warning to log.
func SamplerFromEnv(getenv func(string) string) (SamplerConfig, string) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	if name == "" {
		return DefaultSampler, ""
	}
	base, parent := strings.CutPrefix(name, "parentbased_")
	c := SamplerConfig{ParentBased: parent}
	switch base {
	case "always_on":
		c.Sampler = SamplerAlways
	case "always_off":
		c.Sampler = SamplerNever
	case "traceidratio":
		r, warn := 1.0, ""
		if arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG")); arg != "" {
			v, err := strconv.ParseFloat(arg, 64)
			if err != nil || !(v > 0 && v <= 1) {
				warn = fmt.Sprintf("OTEL_TRACES_SAMPLER_ARG %q is not a ratio in (0, 1]; using 1", arg)
			} else {
				r = v
			}
		}
		c.Sampler, c.Ratio = SamplerRatio, &r
		return c, warn
	default:
		return DefaultSampler, fmt.Sprintf("OTEL_TRACES_SAMPLER %q is not one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio; using parentbased_always_on", name)
	}
	return c, ""
}
