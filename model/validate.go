package model

import (
	"context"
	"strings"

	json "github.com/goccy/go-json"

	"svc/infer"
	"svc/platform/apierr"
	"svc/storage"
)

// Validate checks a document against the model with the strict rules
// (no change level) in either lock state. A document that does not fit is
// still a 200 with success false and the reasons; only a missing model
// (checked first) or an unreadable body is an error.
func (s *Service) Validate(ctx context.Context, tenant string, key storage.ModelKey, body []byte) (*ActionResult, error) {
	if len(body) > MaxBodyBytes {
		return nil, tooLarge()
	}
	m, err := s.get(ctx, tenant, key)
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, apierr.New(apierr.BadRequest, "failed to parse request body: not a JSON document")
	}
	im, err := s.decoded(m)
	if err != nil {
		return nil, err
	}
	widened, err := im.Check(body, infer.ChangeNone, s.limits)
	if err != nil {
		e, ok := apierr.As(err)
		if !ok {
			return nil, err
		}
		if isLimitError(e) {
			return nil, e
		}
		return result(key, false, "Validation failed: "+strings.TrimPrefix(e.Message, "validation failed: ")), nil
	}
	if widened != nil {
		return result(key, false, "Validation failed: the document extends the model"), nil
	}
	return result(key, true, "Validation passed"), nil
}

// isLimitError tells a hostile-input rejection (a bound of infer.Limits),
// which is a 400 for the request, from a document that simply does not fit.
func isLimitError(e *apierr.Error) bool {
	for _, p := range e.Props {
		if p.Key == "limit" {
			return true
		}
	}
	return false
}
