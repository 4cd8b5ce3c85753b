package model

import (
	"svc/storage"
)

// ChangeFunc is told about a model this node changed (lock, unlock,
// change level, unique keys, workflow import, import, delete), after the
// change is stored. Cluster mode broadcasts it so every node drops its
// cached copy at once (cluster.TopicModelInvalidate).
type ChangeFunc func(tenant string, key storage.ModelKey)

type changeBox struct{ fn ChangeFunc }

// OnChange registers fn; nil removes it. Set it before serving.
func (s *Service) OnChange(fn ChangeFunc) {
	if fn == nil {
		s.onChange.Store(nil)
		return
	}
	s.onChange.Store(&changeBox{fn})
}

func (s *Service) changed(tenant string, key storage.ModelKey) {
	if b := s.onChange.Load(); b != nil {
		b.fn(tenant, key)
	}
}

// Forget drops this node's decoded copy of a model, so the next write
// decodes it again from the stored record: what a model.invalidate
// message from another node does here. (Entries are also keyed by the
// stored revision, so a missed message never serves a stale schema past
// the next read of the record; the lease bounds the rest.)
func (s *Service) Forget(tenant string, key storage.ModelKey) {
	s.cache.forget(tenant, key)
}
