package entity

import (
	"context"
	"strings"

	"svc/infer"
	"svc/model"
	"svc/platform/apierr"
	"svc/storage"
)

// modelGate adapts the model service: Admit as is, and strict validation
// (never widening) for merge-patch results through model.Validate.
type modelGate struct{ m *model.Service }

// GateOf makes the model service the entity gate.
func GateOf(m *model.Service) ModelGate { return modelGate{m} }

func (g modelGate) Admit(ctx context.Context, tenant string, key storage.ModelKey, docs [][]byte) error {
	return g.m.Admit(ctx, tenant, key, docs)
}

func (g modelGate) AdmitLoaded(ctx context.Context, m *storage.Model, docs [][]byte) error {
	return g.m.AdmitLoaded(ctx, m, docs)
}

func (g modelGate) Validate(ctx context.Context, tenant string, key storage.ModelKey, doc []byte) error {
	r, err := g.m.Validate(ctx, tenant, key, doc)
	if err != nil {
		return err
	}
	if !r.Success {
		return apierr.New(apierr.BadRequest, "validation failed: "+strings.TrimPrefix(r.Message, "Validation failed: "))
	}
	return nil
}

// XMLToJSON converts an XML entity body with the model API's converter and
// the inference engine's depth bound.
func XMLToJSON(b []byte) ([]byte, error) {
	return model.XMLToJSON(b, infer.DefaultLimits().MaxDepth, 1<<18)
}
