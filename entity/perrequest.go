package entity

import (
	"strconv"

	"svc/platform/apierr"
)

// Amplification limit: a body of empty objects is ~3 bytes an entity, so
// the body cap alone lets one request create millions of records. The
// count is checked once the request is parsed and before its first chunk
// commits, so a refused request writes nothing.

// DefaultMaxPerRequest is SVC_MAX_ENTITIES_PER_REQUEST's default.
const DefaultMaxPerRequest = 10000

// MaxPerRequestSetting names the setting in the refusal.
const MaxPerRequestSetting = "SVC_MAX_ENTITIES_PER_REQUEST"

// apierr.TooManyEntities answers 413.

// WithMaxPerRequest sets SVC_MAX_ENTITIES_PER_REQUEST, the most entities
// one create or collection request may carry; values ≤ 0 keep the default.
func WithMaxPerRequest(n int) Option {
	return func(s *Service) {
		if n > 0 {
			s.maxPerRequest = n
		}
	}
}

// checkCount refuses a request carrying more than the per-request cap.
func (s *Service) checkCount(n int) error {
	if n <= s.maxPerRequest {
		return nil
	}
	return apierr.New(apierr.TooManyEntities, "the request carries "+strconv.Itoa(n)+" entities; at most "+
		strconv.Itoa(s.maxPerRequest)+" are allowed per request ("+MaxPerRequestSetting+")",
		apierr.P("setting", MaxPerRequestSetting), apierr.P("limit", s.maxPerRequest), apierr.P("count", n))
}
