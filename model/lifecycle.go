package model

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"svc/platform/apierr"
	"svc/storage"
)

// List returns the tenant's models.
func (s *Service) List(ctx context.Context, tenant string) ([]Summary, error) {
	ms, err := s.store.ListModels(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	out := make([]Summary, 0, len(ms))
	for _, m := range ms {
		out = append(out, Summary{ID: ID(m.Key), ModelName: m.Key.Name, ModelVersion: m.Key.Version,
			CurrentState: m.State, UpdateDate: formatTime(m.UpdatedAt)})
	}
	return out, nil
}

// Lock freezes a model's schema and opens it to entities.
func (s *Service) Lock(ctx context.Context, tenant string, key storage.ModelKey) (*ActionResult, error) {
	_, err := s.update(ctx, tenant, key, "locking", func(m *storage.Model) error {
		if m.State == Locked {
			return alreadyLocked(key, fmt.Sprintf("model %s:%d is already locked", key.Name, key.Version))
		}
		m.State = Locked
		return nil
	})
	if err != nil {
		return nil, err
	}
	return result(key, true, fmt.Sprintf("Model %s:%d locked", key.Name, key.Version)), nil
}

func (s *Service) entityCount(ctx context.Context, tenant string, key storage.ModelKey) (int64, error) {
	box := s.entities.Load()
	if box == nil {
		return 0, nil
	}
	n, err := box.c.CountEntities(ctx, tenant, key)
	if err != nil {
		return 0, fmt.Errorf("counting entities of %s:%d: %w", key.Name, key.Version, err)
	}
	return n, nil
}

func (s *Service) requireNoEntities(ctx context.Context, tenant string, key storage.ModelKey, verb string) error {
	n, err := s.entityCount(ctx, tenant, key)
	if err != nil {
		return err
	}
	if n > 0 {
		return apierr.New(apierr.ModelHasEntities, fmt.Sprintf("cannot %s: %d entities exist", verb, n),
			append(keyProps(key), apierr.P("entityCount", n))...)
	}
	return nil
}

// Unlock reopens a model without entities to imports.
func (s *Service) Unlock(ctx context.Context, tenant string, key storage.ModelKey) (*ActionResult, error) {
	_, err := s.update(ctx, tenant, key, "unlocking", func(m *storage.Model) error {
		if m.State != Locked {
			return stateConflict(apierr.ModelAlreadyUnlocked, key, fmt.Sprintf("model %s:%d is not locked", key.Name, key.Version), Locked, Unlocked)
		}
		if err := s.requireNoEntities(ctx, tenant, key, "unlock"); err != nil {
			return err
		}
		m.State = Unlocked
		return nil
	})
	if err != nil {
		return nil, err
	}
	return result(key, true, fmt.Sprintf("Model %s:%d unlocked", key.Name, key.Version)), nil
}

// Delete removes an unlocked model without entities. A locked model cannot
// be deleted; that is checked before the entity count (docs/decisions/0012-model-lifecycle-and-validation.md).
func (s *Service) Delete(ctx context.Context, tenant string, key storage.ModelKey) (*ActionResult, error) {
	m, err := s.get(ctx, tenant, key)
	if err != nil {
		return nil, err
	}
	if m.State == Locked {
		return nil, alreadyLocked(key, fmt.Sprintf("cannot delete entityModel{name=%s, version=%d}: the model is locked", key.Name, key.Version))
	}
	if err := s.requireNoEntities(ctx, tenant, key, "delete"); err != nil {
		return nil, err
	}
	if err := s.store.DeleteModel(ctx, tenant, key); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, notFound(key)
		}
		return nil, fmt.Errorf("deleting model %s:%d: %w", key.Name, key.Version, err)
	}
	s.cache.forget(tenant, key)
	s.changed(tenant, key)
	return result(key, true, fmt.Sprintf("model %s:%d deleted", key.Name, key.Version)), nil
}

// SetChangeLevel stores how far entity writes may extend the model once it
// is locked. It is allowed in either state; the model must exist first.
func (s *Service) SetChangeLevel(ctx context.Context, tenant string, key storage.ModelKey, level string) (*ActionResult, error) {
	_, err := s.update(ctx, tenant, key, "setting the change level of", func(m *storage.Model) error {
		if !validChangeLevel(level) {
			props := append(keyProps(key), apierr.P("suppliedValue", level), apierr.P("validValues", ChangeLevels))
			return apierr.New(apierr.InvalidChangeLevel, fmt.Sprintf("invalid change level %q; valid values: %s", level, strings.Join(ChangeLevels, ", ")), props...)
		}
		if m.ChangeLevel == level {
			return errUnchanged
		}
		m.ChangeLevel = level
		return nil
	})
	if err != nil {
		return nil, err
	}
	return result(key, true, fmt.Sprintf("model %s:%d now at change level %s", key.Name, key.Version, level)), nil
}

func validChangeLevel(level string) bool {
	for _, l := range ChangeLevels {
		if l == level {
			return true
		}
	}
	return false
}
