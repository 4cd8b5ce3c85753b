package entity

import (
	"bytes"
	"context"
	"strconv"

	"svc/platform/jsondoc"
	"svc/storage"
)

// NewEntity is one entity to create: its model and its JSON document.
type NewEntity struct {
	Model storage.ModelKey
	Data  []byte
}

// CreateEntities creates items of possibly different models in one
// transaction, without chunking: the gRPC EntityCreateCollectionRequest,
// whose documents arrive as JSON values rather than the JSON-encoded
// strings of POST /entity/{format}. Every item is checked before the
// transaction begins; errors name the item's index.
func (s *Service) CreateEntities(ctx context.Context, a Actor, items []NewEntity) (Chunk, error) {
	if len(items) == 0 {
		return Chunk{}, badRequest("collection is empty")
	}
	if err := s.checkCount(len(items)); err != nil {
		return Chunk{}, err
	}
	cache := map[storage.ModelKey]*storage.Model{}
	chunk := make([]newItem, len(items))
	for i := range items {
		it := &items[i]
		if it.Model.Name == "" {
			return Chunk{}, badRequest("item " + strconv.Itoa(i) + ": missing model")
		}
		if err := jsondoc.TextProblem("field", "model.name", it.Model.Name); err != nil {
			return Chunk{}, itemErr(i, err)
		}
		m := cache[it.Model]
		if m == nil {
			var err error
			if m, err = s.lockedModel(ctx, a.Tenant, it.Model); err != nil {
				return Chunk{}, itemErr(i, err)
			}
			cache[it.Model] = m
		}
		d := bytes.TrimSpace(it.Data)
		if len(d) == 0 || d[0] != '{' {
			return Chunk{}, badRequest("item " + strconv.Itoa(i) + ": data must be a JSON object")
		}
		if err := jsondoc.CheckProblem(d, "item "+strconv.Itoa(i)+": data must be a JSON object", "item "+strconv.Itoa(i)+": data"); err != nil {
			return Chunk{}, err
		}
		chunk[i] = newItem{model: m, data: d}
	}
	return s.commitCreates(ctx, a, chunk, 0)
}
