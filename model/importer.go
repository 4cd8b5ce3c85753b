package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"svc/infer"
	"svc/platform/apierr"
	"svc/platform/jsondoc"
	"svc/storage"
)

// Import creates the model from a sample or merges the sample into the
// unlocked model, and returns the model id. Check order (docs/decisions/0012-model-lifecycle-and-validation.md):
// converter, lock state, data format and body. Importing what the model
// already holds writes nothing.
func (s *Service) Import(ctx context.Context, tenant string, key storage.ModelKey, dataFormat, converter string, body []byte) (string, error) {
	if converter != ConvSampleData && converter != ConvSimpleView {
		return "", badParam("converter", converter, "unsupported import converter: "+converter+"; valid values: SAMPLE_DATA, SIMPLE_VIEW")
	}
	if len(body) > MaxBodyBytes {
		return "", tooLarge()
	}
	// Also checked by the HTTP guard; the gRPC model import comes here
	// directly.
	if err := jsondoc.TextProblem("parameter", "entityName", key.Name); err != nil {
		return "", err
	}
	if dataFormat == "JSON" {
		if err := jsondoc.Refusal(body, ""); err != nil {
			return "", err
		}
	}
	cur, err := s.store.GetModel(ctx, tenant, key)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		cur = nil
	case err != nil:
		return "", fmt.Errorf("loading model %s:%d: %w", key.Name, key.Version, err)
	case cur.State == Locked:
		return "", lockedForImport(key)
	}
	sample, err := s.parseSample(dataFormat, converter, body)
	if err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			// The last attempt merged the stored model into sample; start
			// again from the body against the newer record.
			if sample, err = s.parseSample(dataFormat, converter, body); err != nil {
				return "", err
			}
			cur, err = s.store.GetModel(ctx, tenant, key)
			if errors.Is(err, storage.ErrNotFound) {
				cur = nil
			} else if err != nil {
				return "", fmt.Errorf("loading model %s:%d: %w", key.Name, key.Version, err)
			} else if cur.State == Locked {
				return "", lockedForImport(key)
			}
		}
		// Merge is commutative, so the stored model is merged into the
		// sample this request owns: no copy of the (larger) stored model.
		merged := sample
		if cur == nil {
			cur = &storage.Model{Tenant: tenant, Key: key, State: Unlocked}
		} else {
			base, err := s.decoded(cur)
			if err != nil {
				return "", err
			}
			merged.Merge(base)
		}
		schema := merged.AppendSimpleView(nil)
		if cur.Revision != 0 && bytes.Equal(schema, cur.Schema) {
			return ID(key), nil // stored schemas are canonical SIMPLE_VIEW bytes
		}
		if err := s.recheckKeys(cur, schema, "re-import"); err != nil {
			return "", err
		}
		cur.Schema = schema
		err = s.store.PutModel(ctx, cur)
		if err == nil {
			s.remember(cur, merged)
			s.changed(tenant, key)
			return ID(key), nil
		}
		if !errors.Is(err, storage.ErrConflict) || attempt+1 >= s.maxRetries {
			return "", fmt.Errorf("importing model %s:%d: %w", key.Name, key.Version, err)
		}
	}
}

func tooLarge() error {
	return apierr.Newf(apierr.BadRequest, "failed to read body: larger than %d bytes", MaxBodyBytes)
}

func lockedForImport(key storage.ModelKey) error {
	return alreadyLocked(key, fmt.Sprintf("cannot save entityModel{name=%s, version=%d} because this model has already been registered", key.Name, key.Version))
}

// recheckKeys keeps declared unique keys valid across a schema change.
func (s *Service) recheckKeys(m *storage.Model, schema []byte, what string) error {
	keys, err := UniqueKeysOf(m)
	if err != nil || len(keys) == 0 {
		return err
	}
	if err := checkUniqueKeys(m.Key, keys, schema); err != nil {
		e, _ := apierr.As(err)
		return apierr.New(e.Code, what+" invalidates existing unique key definitions: "+e.Message, e.Props...)
	}
	return nil
}

// parseSample turns an import body into a model: SAMPLE_DATA is inferred
// from a JSON or XML document, SIMPLE_VIEW is decoded from an export.
func (s *Service) parseSample(dataFormat, converter string, body []byte) (*infer.Model, error) {
	switch dataFormat {
	case FormatJSON, FormatXML:
	default:
		return nil, badParam("dataFormat", dataFormat, "unsupported data format: "+dataFormat+"; valid values: JSON, XML")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apierr.New(apierr.BadRequest, "empty request body: the sample document is required")
	}
	if converter == ConvSimpleView {
		if dataFormat != FormatJSON {
			return nil, badParam("dataFormat", dataFormat, "a SIMPLE_VIEW import takes dataFormat JSON")
		}
		return s.parseSimpleViewBody(body)
	}
	doc := body
	if dataFormat == FormatXML {
		var err error
		doc, err = XMLToJSON(body, s.limits.MaxDepth, s.xmlMaxNodes())
		if err != nil {
			return nil, apierr.New(apierr.BadRequest, err.Error())
		}
	}
	m := infer.NewModel()
	if err := m.Ingest(doc, s.limits); err != nil {
		return nil, asBadRequest(err)
	}
	return m, nil
}

// parseSimpleViewBody accepts a whole export envelope (currentState is
// ignored) or a bare node map; infer.ParseSimpleView reads both.
func (s *Service) parseSimpleViewBody(body []byte) (*infer.Model, error) {
	m, err := infer.ParseSimpleView(body, s.limits)
	if err != nil {
		return nil, asBadRequest(err)
	}
	return m, nil
}

// asBadRequest keeps infer's catalogue errors and wraps anything else as a
// 400: whatever infer rejects in a request body is the client's input.
func asBadRequest(err error) error {
	if _, ok := apierr.As(err); ok {
		return err
	}
	return apierr.New(apierr.BadRequest, err.Error())
}
