package streamdata

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/storage"
)

// index is one index a stream read can use: a built-in on a lifecycle
// column or a user composite index.
type index struct {
	id        [16]byte
	name      string
	rangePath string
	eqPaths   []string
	created   time.Time
	ready     bool
	persisted bool
}

// builtinRanges are the lifecycle fields the engines index for every
// model (PostgreSQL: entities_model_created and entities_model_state,
// migrations 0002 and 0018).
var builtinRanges = []string{"creationDate", "state"}

func builtinID(key storage.ModelKey, field string) [16]byte {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("svc:stream-index:"+key.Name+"."+strconv.Itoa(key.Version)+":"+field))
}

// indexesOf lists the indexes of a model: built-ins first, then the user
// composite indexes in creation order.
func (s *Service) indexesOf(ctx context.Context, tenant string, key storage.ModelKey) ([]index, error) {
	var out []index
	for _, f := range builtinRanges {
		out = append(out, index{id: builtinID(key, f), name: "builtin_" + f, rangePath: f, ready: true})
	}
	if s.indexes == nil {
		return out, nil
	}
	ixs, err := s.indexes.ListStreamIndexes(ctx, tenant, key)
	if err != nil {
		return nil, err
	}
	for _, ix := range ixs {
		out = append(out, index{id: ix.ID, name: ix.Name, rangePath: ix.RangePath, eqPaths: ix.EqPaths,
			created: ix.CreatedAt, ready: ix.Ready, persisted: true})
	}
	return out, nil
}

// IndexInfo is one entry of a model's index list (IndexConfigurationDto).
type IndexInfo struct {
	ID   [16]byte
	Name string
	// RangePath and EqPaths are paths of the definition language (a
	// lifecycle name or $.a.b).
	RangePath string
	EqPaths   []string
	// Created is zero for the built-in indexes.
	Created   time.Time
	Ready     bool
	Persisted bool
}

// IndexList lists the indexes a stream read of a model can use: the
// built-ins first, then the user composite indexes in creation order.
func (s *Service) IndexList(ctx context.Context, tenant, class string) ([]IndexInfo, error) {
	key, err := resolveModel(ctx, s.models, tenant, class)
	if err != nil {
		return nil, err
	}
	ixs, err := s.indexesOf(ctx, tenant, key)
	if err != nil {
		return nil, err
	}
	out := make([]IndexInfo, len(ixs))
	for i, ix := range ixs {
		out[i] = IndexInfo{ID: ix.id, Name: ix.name, RangePath: ix.rangePath, EqPaths: ix.eqPaths,
			Created: ix.created, Ready: ix.ready, Persisted: ix.persisted}
	}
	return out, nil
}

// IndexSpec is the body of the composite-index extension.
type IndexSpec struct {
	EntityClass string   `json:"entityClass"`
	Name        string   `json:"name"`
	RangeColumn string   `json:"rangeColPath"`
	Columns     []string `json:"columns"`
}

// normPath resolves an index field to the path language of definitions;
// array paths are refused (returnsList is always false).
func normPath(p string) (string, error) {
	r, err := resolvePath(p, 1)
	if err != nil {
		return "", err
	}
	if r.many() {
		return "", badPath(p, "an index field must hold one value per entity, and this path crosses an array")
	}
	if r.meta != "" {
		return r.meta, nil
	}
	return r.path, nil
}

// CreateIndex creates a user composite index (built before it returns).
func (s *Service) CreateIndex(ctx context.Context, tenant string, spec *IndexSpec) (*storage.StreamIndex, error) {
	if s.indexes == nil {
		return nil, apierr.New(apierr.NotImplemented, "composite indexes are not available on this engine")
	}
	key, err := resolveModel(ctx, s.models, tenant, spec.EntityClass)
	if err != nil {
		return nil, err
	}
	ix, err := s.indexOf(ctx, tenant, key, spec)
	if err != nil {
		return nil, err
	}
	if ix.ID, err = uuid.NewUUID(); err != nil {
		return nil, err
	}
	if err := s.indexes.CreateStreamIndex(ctx, ix); err != nil {
		if errors.Is(err, storage.ErrExists) {
			return nil, apierr.New(apierr.Conflict, "an index named "+strconv.Quote(spec.Name)+" exists for this model",
				apierr.P("name", spec.Name))
		}
		return nil, err
	}
	return ix, nil
}

// indexOf checks spec and resolves it into the index it describes over
// model key (no id, not stored).
func (s *Service) indexOf(ctx context.Context, tenant string, key storage.ModelKey, spec *IndexSpec) (*storage.StreamIndex, error) {
	if spec.Name == "" || len(spec.Name) > 200 {
		return nil, apierr.New(apierr.BadRequest, "index name must be 1–200 characters", apierr.P("field", "name"))
	}
	if spec.RangeColumn == "" {
		return nil, apierr.New(apierr.BadRequest, "rangeColPath is missing", apierr.P("field", "rangeColPath"))
	}
	if len(spec.Columns) > 8 {
		return nil, apierr.New(apierr.BadRequest, "at most 8 non-range columns", apierr.P("field", "columns"))
	}
	ix := &storage.StreamIndex{Tenant: tenant, Model: key, Name: spec.Name, CreatedAt: s.now().UTC()}
	var err error
	if ix.RangePath, err = normPath(spec.RangeColumn); err != nil {
		return nil, err
	}
	rr, _ := resolvePath(spec.RangeColumn, 1)
	sortSpec, err := rangeSort(rr, false)
	if err != nil {
		return nil, err
	}
	q, err := s.planner.Plan(ctx, tenant, key, []byte(`{"type":"group","operator":"AND","conditions":[]}`), []string{sortSpec})
	if err != nil {
		return nil, err
	}
	ix.Range = q.Sort[0]
	for _, c := range spec.Columns {
		p, err := normPath(c)
		if err != nil {
			return nil, err
		}
		if p == "creationDate" || p == "lastUpdateTime" {
			return nil, badPath(c, "a date is a range field, not an equality field")
		}
		ix.EqPaths = append(ix.EqPaths, p)
	}
	return ix, nil
}

// DropIndex drops a user composite index.
func (s *Service) DropIndex(ctx context.Context, tenant, rawID string) error {
	if s.indexes == nil {
		return apierr.New(apierr.NotImplemented, "composite indexes are not available on this engine")
	}
	id, err := parseID(rawID, "indexId")
	if err != nil {
		return err
	}
	err = s.indexes.DropStreamIndex(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return apierr.New(apierr.NotFound, "index "+rawID+" not found", apierr.P("indexId", rawID))
	}
	return err
}
