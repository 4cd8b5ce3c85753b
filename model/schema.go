package model

import (
	"fmt"
	"time"

	"svc/infer"
	"svc/storage"
)

// Converters and data formats of the import and export paths.
const (
	ConvSimpleView = "SIMPLE_VIEW"
	ConvJSONSchema = "JSON_SCHEMA"
	ConvSampleData = "SAMPLE_DATA"
	FormatJSON     = "JSON"
	FormatXML      = "XML"
)

type parsed struct {
	rev   int64
	model *infer.Model
	// expires ends the entry's lease (SVC_MODEL_CACHE_LEASE); zero never.
	expires time.Time
}

// decoded returns the inference model of a stored record, from the cache
// when it was decoded at this revision. The result is shared: callers only
// read it (Check, Clone, Equal, Append*) and Clone before widening.
func (s *Service) decoded(m *storage.Model) (*infer.Model, error) {
	ck := cacheKey{m.Tenant, m.Key}
	if v, ok := s.cache.m.Load(ck); ok {
		if p := v.(*parsed); p.rev == m.Revision && s.live(p) {
			return p.model, nil
		}
	}
	var im *infer.Model
	if len(m.Schema) == 0 {
		im = infer.NewModel()
	} else {
		var err error
		im, err = infer.ParseSimpleView(m.Schema, s.storedLimits)
		if err != nil {
			return nil, fmt.Errorf("decoding stored model %s:%d: %w", m.Key.Name, m.Key.Version, err)
		}
	}
	s.cache.m.Store(ck, &parsed{rev: m.Revision, model: im, expires: s.expiry()})
	return im, nil
}

// remember caches a model just written at m's new revision.
func (s *Service) remember(m *storage.Model, im *infer.Model) {
	s.cache.m.Store(cacheKey{m.Tenant, m.Key}, &parsed{rev: m.Revision, model: im, expires: s.expiry()})
}
