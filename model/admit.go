package model

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"svc/infer"
	"svc/platform/apierr"
	"svc/storage"
)

// Admit checks docs (raw JSON entities) against the LOCKED model key of
// tenant before an entity write: MODEL_NOT_FOUND (404), MODEL_NOT_LOCKED
// (409), or infer's INCOMPATIBLE_TYPE / POLYMORPHIC_SLOT / BAD_REQUEST with
// entityName and entityVersion added. When the model's change level lets
// the documents widen it, the widened model is persisted (optimistic
// revision, retried on storage.ErrConflict against the newer model) before
// Admit returns nil; a rejected batch leaves the model untouched.
//
// Widening writes of one model are serialised within the process: the
// documents are checked without the lock, and only a batch that widens
// takes it, for its write and any retry. Without it, concurrent batches
// that each widened the model (documents whose fields keep growing) kept
// invalidating each other's revision, each retry re-checking the whole
// batch, until one ran out of retries and answered 409 CONFLICT (issue
// 14). With it a retry can only lose to another process.
func (s *Service) Admit(ctx context.Context, tenant string, key storage.ModelKey, docs [][]byte) error {
	return s.admit(ctx, tenant, key, nil, docs)
}

// AdmitLoaded is Admit against m, a LOCKED model record the caller read
// from the store for this request just before: the first check uses it
// instead of reading the model again (a create read it to check the
// LOCKED precondition, and a second read was a share of its CPU). A
// widening still writes at m's revision, so a model changed since m was
// read makes the write lose and the retry read the newer model.
func (s *Service) AdmitLoaded(ctx context.Context, m *storage.Model, docs [][]byte) error {
	return s.admit(ctx, m.Tenant, m.Key, m, docs)
}

func (s *Service) admit(ctx context.Context, tenant string, key storage.ModelKey, loaded *storage.Model, docs [][]byte) error {
	var unlock func()
	defer func() {
		if unlock != nil {
			unlock()
		}
	}()
	for attempt := 0; ; attempt++ {
		var m *storage.Model
		if attempt == 0 && loaded != nil {
			// A copy: a widening below replaces its Schema.
			c := *loaded
			m = &c
		} else {
			var err error
			if m, err = s.get(ctx, tenant, key); err != nil {
				return err
			}
		}
		if m.State != Locked {
			return apierr.New(apierr.ModelNotLocked, "model is not locked", keyProps(key)...)
		}
		level, err := infer.ParseChangeLevel(m.ChangeLevel)
		if err != nil {
			return fmt.Errorf("stored change level of %s:%d: %w", key.Name, key.Version, err)
		}
		base, err := s.decoded(m)
		if err != nil {
			return err
		}
		// One batch widens one copy of the model in place: checking each
		// document with base.Check and keeping its widened model cloned
		// and encoded the model per document (issue 14).
		batch := base.NewBatch(level, s.limits)
		for i, doc := range docs {
			if len(doc) > MaxBodyBytes {
				return &DocError{Index: i, Err: tooLarge()}
			}
			if err := batch.Check(doc); err != nil {
				return &DocError{Index: i, Err: withModelKey(err, key)}
			}
		}
		cur := batch.Widened()
		if cur == nil {
			return nil
		}
		if unlock == nil {
			// A widening written while this batch was checked makes the
			// put below lose; the retry, under the lock, checks against
			// the newer model.
			unlock = s.lockWidening(tenant, key)
		}
		schema := cur.AppendSimpleView(nil)
		if err := s.recheckKeys(m, schema, "the entity's schema change"); err != nil {
			return err
		}
		m.Schema = schema
		err = s.store.PutModel(ctx, m)
		if err == nil {
			s.remember(m, cur)
			return nil
		}
		if !errors.Is(err, storage.ErrConflict) || attempt+1 >= s.maxRetries {
			return fmt.Errorf("widening model %s:%d: %w", key.Name, key.Version, err)
		}
	}
}

// lockWidening takes the widening lock of tenant's model key.
func (s *Service) lockWidening(tenant string, key storage.ModelKey) func() {
	ck := cacheKey{tenant, key}
	v, ok := s.widening.Load(ck)
	if !ok {
		v, _ = s.widening.LoadOrStore(ck, &sync.Mutex{})
	}
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// withModelKey adds entityName and entityVersion to infer's errors. The
// version is a string on INCOMPATIBLE_TYPE (docs/decisions/0012-model-lifecycle-and-validation.md).
func withModelKey(err error, key storage.ModelKey) error {
	e, ok := apierr.As(err)
	if !ok {
		return err
	}
	c := *e
	c.Props = append([]apierr.Prop(nil), e.Props...)
	for _, p := range c.Props {
		if p.Key == "entityName" {
			return &c
		}
	}
	c.Props = append(c.Props, apierr.P("entityName", key.Name), apierr.P("entityVersion", strconv.Itoa(key.Version)))
	return &c
}

// DocError names the document of an Admit batch that was refused, so a
// caller can say which item failed without admitting the documents one by
// one (which would persist the widening of those before it while the
// whole batch is refused).
type DocError struct {
	Index int
	Err   error
}

func (e *DocError) Error() string { return e.Err.Error() }

func (e *DocError) Unwrap() error { return e.Err }

// DocIndex is the refused document's position in the batch.
func (e *DocError) DocIndex() int { return e.Index }
