package crud

import (
	"context"
	"time"

	"svc/entity"
	"svc/model"
	"svc/search"
	"svc/storage"
)

// Entities is the part of the entity service the CRUD RPCs call;
// *entity.Service satisfies it. The RPCs only translate payloads, so the
// HTTP API and gRPC share one implementation of every rule.
type Entities interface {
	Create(ctx context.Context, a entity.Actor, key storage.ModelKey, format string, body []byte, window int) (*entity.Result, error)
	CreateEntities(ctx context.Context, a entity.Actor, items []entity.NewEntity) (entity.Chunk, error)
	Update(ctx context.Context, a entity.Actor, id [16]byte, format string, body []byte, transition, ifMatch string) ([16]byte, error)
	Patch(ctx context.Context, a entity.Actor, id [16]byte, format, contentType, ifMatch string, body []byte, transition string) ([16]byte, error)
	Delete(ctx context.Context, a entity.Actor, id [16]byte) (*entity.Deleted, error)
	DeleteByModel(ctx context.Context, a entity.Actor, key storage.ModelKey, body []byte, at *time.Time) (*entity.ModelDeleted, error)
	Get(ctx context.Context, tenant string, id [16]byte, at *time.Time, tx *[16]byte) (*storage.Entity, error)
	List(ctx context.Context, tenant string, key storage.ModelKey, pageSize, pageNumber int, at *time.Time) ([]*storage.Entity, error)
	Changes(ctx context.Context, tenant string, id [16]byte, at *time.Time) ([]entity.Change, error)
	Transitions(ctx context.Context, tenant string, id [16]byte, at *time.Time, tx *[16]byte) ([]string, error)
	CountByModel(ctx context.Context, tenant string, at *time.Time) ([]entity.ModelCount, error)
	CountForModel(ctx context.Context, tenant string, key storage.ModelKey, at *time.Time) (entity.ModelCount, error)
	CountByState(ctx context.Context, tenant string, key *storage.ModelKey, filter entity.StateFilter, at *time.Time) ([]storage.StateCount, error)
}

// Models is the part of the model service entityModelManage calls;
// *model.Service satisfies it.
type Models interface {
	Import(ctx context.Context, tenant string, key storage.ModelKey, dataFormat, converter string, body []byte) (string, error)
	AppendExport(ctx context.Context, tenant string, key storage.ModelKey, converter string, dst []byte) ([]byte, error)
	Lock(ctx context.Context, tenant string, key storage.ModelKey) (*model.ActionResult, error)
	Unlock(ctx context.Context, tenant string, key storage.ModelKey) (*model.ActionResult, error)
	Delete(ctx context.Context, tenant string, key storage.ModelKey) (*model.ActionResult, error)
	List(ctx context.Context, tenant string) ([]model.Summary, error)
}

// Search is the part of the search service the search RPCs call;
// *search.Service satisfies it.
type Search interface {
	Direct(ctx context.Context, r *search.DirectRequest) ([]*storage.Entity, error)
	Async() bool
	Submit(ctx context.Context, r *search.AsyncRequest) ([16]byte, error)
	JobStatus(ctx context.Context, tenant string, id [16]byte) (*search.Status, error)
	Results(ctx context.Context, tenant string, id [16]byte, number, size int) (*search.Page, error)
	Cancel(ctx context.Context, tenant string, id [16]byte) error
}

// Services are the domain services behind the CRUD RPCs. A nil service
// makes its RPCs answer Unimplemented.
type Services struct {
	Entities Entities
	Models   Models
	Search   Search
}
