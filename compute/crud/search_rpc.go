package crud

import (
	"strconv"
	"time"

	"github.com/google/uuid"

	"svc/compute/wire"
	"svc/entity"
	"svc/platform/apierr"
	"svc/search"
	"svc/storage"
)

// entityPayload is an entity as EntityResponse carries it.
func entityPayload(e *storage.Entity) wire.Payload {
	return wire.Payload{Type: "JSON", Data: e.Data, Meta: &wire.EntityMeta{
		ID:             uuid.UUID(e.ID).String(),
		ModelKey:       wire.ModelKey{Name: e.Model.Name, Version: e.Model.Version},
		State:          e.State,
		CreationDate:   formatTime(e.CreatedAt),
		LastUpdateTime: formatTime(e.UpdatedAt),
		TransactionID:  uuid.UUID(e.TxID).String(),
	}}
}

func (c *crudCall) entityOK(e *storage.Entity) error {
	return c.emit(wire.TypeEntityResponse, &wire.EntityResponse{Base: c.ok(), RequestID: c.id, Payload: entityPayload(e)})
}

func (c *crudCall) entityFailed(err error) error {
	return c.emit(wire.TypeEntityResponse, &wire.EntityResponse{Base: c.failed(err), RequestID: c.id,
		Payload: wire.Payload{Type: "JSON"}})
}

// get serves EntityGetRequest: the latest revision or the one live at
// pointInTime.
func (c *crudCall) get() error {
	id, err := parseID("entityId", c.req.EntityID)
	if err != nil {
		return err
	}
	at, err := c.pointInTime()
	if err != nil {
		return err
	}
	e, err := c.s.svc.Entities.Get(c.ctx, c.p.TenantID, id, at, nil)
	if err != nil {
		return c.entityFailed(err)
	}
	return c.entityOK(e)
}

// getAll serves EntityGetAllRequest: one page of a model's entities, one
// event each. Pages count from 0 on entitySearchCollection and from 1 on
// entityManageCollection, where the Cloud-era client sends it
// (docs/decisions/0019-compute-members.md).
func (c *crudCall) getAll() error {
	key, err := c.modelKey(c.req.Model)
	if err != nil {
		return err
	}
	at, err := c.pointInTime()
	if err != nil {
		return err
	}
	size, page := c.paging(20)
	if c.rpc == rpcEntityManageCollection && page > 0 {
		page--
	}
	list, err := c.s.svc.Entities.List(c.ctx, c.p.TenantID, key, size, page, at)
	if err != nil {
		return c.entityFailed(err)
	}
	return c.entities(list)
}

// paging is the request's page size (defaultSize when absent or not
// positive) and page number (0 when absent).
func (c *crudCall) paging(defaultSize int) (size, page int) {
	size = defaultSize
	if c.req.PageSize != nil && *c.req.PageSize > 0 {
		size = *c.req.PageSize
	}
	if c.req.PageNumber != nil {
		page = *c.req.PageNumber
	}
	return size, page
}

func (c *crudCall) entities(list []*storage.Entity) error {
	for _, e := range list {
		if err := c.entityOK(e); err != nil {
			return err
		}
	}
	return nil
}

// sortOf turns orderBy into the sort values of the HTTP search.
func sortOf(order []wire.OrderBy) ([]string, error) {
	var out []string
	for i, o := range order {
		if o.Path == "" {
			return nil, invalid("orderBy[%d].path is required", i)
		}
		v := o.Path
		switch o.Source {
		case "", "data":
		case "meta":
			v = "@" + o.Path
		default:
			return nil, invalid("orderBy[%d].source must be data or meta", i)
		}
		if o.Desc {
			v += ":desc"
		}
		out = append(out, v)
	}
	return out, nil
}

func (c *crudCall) condition() ([]byte, error) {
	if len(c.req.Condition) == 0 || string(c.req.Condition) == "null" {
		return nil, invalid("condition is required")
	}
	return c.req.Condition, nil
}

// query is what a direct search and a snapshot both take from the request:
// model, condition, point in time and sort.
type query struct {
	key  storage.ModelKey
	cond []byte
	at   *time.Time
	sort []string
}

func (c *crudCall) query() (query, error) {
	var q query
	var err error
	if q.key, err = c.modelKey(c.req.Model); err != nil {
		return q, err
	}
	if q.cond, err = c.condition(); err != nil {
		return q, err
	}
	if q.at, err = c.pointInTime(); err != nil {
		return q, err
	}
	q.sort, err = sortOf(c.req.OrderBy)
	return q, err
}

// search serves EntitySearchRequest: a direct search whose matches are
// streamed, bounded by limit (default 1000) or failing.
func (c *crudCall) search() error {
	q, err := c.query()
	if err != nil {
		return err
	}
	var limit []byte
	if c.req.Limit != nil {
		limit = strconv.AppendInt(nil, int64(*c.req.Limit), 10)
	}
	es, err := c.s.svc.Search.Direct(c.ctx, &search.DirectRequest{Tenant: c.p.TenantID, Model: q.key, Condition: q.cond,
		Sort: q.sort, Limit: limit, At: q.at})
	if err != nil {
		return c.entityFailed(err)
	}
	return c.entities(es)
}

// changes serves EntityChangesMetadataGetRequest: one event per change,
// newest first.
func (c *crudCall) changes() error {
	id, err := parseID("entityId", c.req.EntityID)
	if err != nil {
		return err
	}
	at, err := c.pointInTime()
	if err != nil {
		return err
	}
	cs, err := c.s.svc.Entities.Changes(c.ctx, c.p.TenantID, id, at)
	if err != nil {
		return c.emit(wire.TypeEntityChangesMetadataResponse, &wire.ChangesResponse{Base: c.failed(err), RequestID: c.id})
	}
	for _, ch := range cs {
		m := wire.ChangeMeta{ChangeType: ch.Type, TimeOfChange: formatTime(ch.At), User: ch.User, AttributedKind: ch.AttributedKind}
		if ch.ExecID != "" {
			m.ExecutedBy = &wire.Principal{ID: ch.ExecID, Kind: ch.ExecKind}
		}
		if ch.HasTx {
			m.TransactionID = uuid.UUID(ch.TxID).String()
		}
		if err := c.emit(wire.TypeEntityChangesMetadataResponse, &wire.ChangesResponse{Base: c.ok(), RequestID: c.id, ChangeMeta: m}); err != nil {
			return err
		}
	}
	return nil
}

// stats serves EntityStatsGetRequest: one model's count, or every model's.
func (c *crudCall) stats() error {
	at, err := c.pointInTime()
	if err != nil {
		return err
	}
	var counts []entity.ModelCount
	if c.req.Model != nil && c.req.Model.Name != "" {
		var n entity.ModelCount
		n, err = c.s.svc.Entities.CountForModel(c.ctx, c.p.TenantID, storage.ModelKey{Name: c.req.Model.Name, Version: c.req.Model.Version}, at)
		counts = []entity.ModelCount{n}
	} else {
		counts, err = c.s.svc.Entities.CountByModel(c.ctx, c.p.TenantID, at)
	}
	if err != nil {
		return c.emit(wire.TypeEntityStatsResponse, &wire.StatsResponse{Base: c.failed(err), RequestID: c.id})
	}
	for _, n := range counts {
		if err := c.emit(wire.TypeEntityStatsResponse, &wire.StatsResponse{Base: c.ok(), RequestID: c.id,
			ModelName: n.Key.Name, ModelVersion: n.Key.Version, Count: n.Count}); err != nil {
			return err
		}
	}
	return nil
}

// statsByState serves EntityStatsByStateGetRequest: non-zero counts per
// (model, state), optionally for one model and some states.
func (c *crudCall) statsByState() error {
	at, err := c.pointInTime()
	if err != nil {
		return err
	}
	fail := func(err error) error {
		return c.emit(wire.TypeEntityStatsByStateResponse, &wire.StatsByStateResponse{
			StatsResponse: wire.StatsResponse{Base: c.failed(err), RequestID: c.id}})
	}
	if err := entity.CheckStates(c.req.States); err != nil {
		return fail(err)
	}
	var key *storage.ModelKey
	if c.req.Model != nil && c.req.Model.Name != "" {
		key = &storage.ModelKey{Name: c.req.Model.Name, Version: c.req.Model.Version}
	}
	var filter entity.StateFilter
	if len(c.req.States) > 0 {
		filter = c.req.States
	}
	counts, err := c.s.svc.Entities.CountByState(c.ctx, c.p.TenantID, key, filter, at)
	if err != nil {
		return fail(err)
	}
	for _, n := range counts {
		if err := c.emit(wire.TypeEntityStatsByStateResponse, &wire.StatsByStateResponse{State: n.State,
			StatsResponse: wire.StatsResponse{Base: c.ok(), RequestID: c.id, ModelName: n.Model.Name,
				ModelVersion: n.Model.Version, Count: n.Count}}); err != nil {
			return err
		}
	}
	return nil
}

// Snapshot (async) search.

func (c *crudCall) snapshotFailed(err error) error {
	return c.emit(wire.TypeEntitySnapshotSearchResponse, &wire.SnapshotResponse{Base: c.failed(err),
		Status: wire.SnapshotStatus{SnapshotID: nilUUID, Status: storage.JobFailed}})
}

func (c *crudCall) asyncOn() error {
	if !c.s.svc.Search.Async() {
		return apierr.New(apierr.NotImplemented, "async search is not running on this server")
	}
	return nil
}

// snapshotReply answers with the job's current status.
func (c *crudCall) snapshotReply(id [16]byte) error {
	st, err := c.s.svc.Search.JobStatus(c.ctx, c.p.TenantID, id)
	if err != nil {
		return c.snapshotFailed(err)
	}
	return c.snapshotOK(st)
}

func (c *crudCall) snapshotOK(st *search.Status) error {
	n := st.Job.Count
	return c.emit(wire.TypeEntitySnapshotSearchResponse, &wire.SnapshotResponse{Base: c.ok(), Status: wire.SnapshotStatus{
		SnapshotID: uuid.UUID(st.Job.ID).String(), Status: st.Job.Status, EntitiesCount: &n,
		ExpirationDate: formatTime(st.Expiration)}})
}

// snapshotSubmit serves EntitySnapshotSearchRequest: the job is queued
// and its RUNNING status answered at once.
func (c *crudCall) snapshotSubmit() error {
	q, err := c.query()
	if err != nil {
		return err
	}
	if err := c.asyncOn(); err != nil {
		return c.snapshotFailed(err)
	}
	id, err := c.s.svc.Search.Submit(c.ctx, &search.AsyncRequest{Tenant: c.p.TenantID, Model: q.key, Condition: q.cond, Sort: q.sort, At: q.at})
	if err != nil {
		return c.snapshotFailed(err)
	}
	return c.snapshotReply(id)
}

func (c *crudCall) snapshotStatus() error {
	id, err := parseID("snapshotId", c.req.SnapshotID)
	if err != nil {
		return err
	}
	if err := c.asyncOn(); err != nil {
		return c.snapshotFailed(err)
	}
	return c.snapshotReply(id)
}

func (c *crudCall) snapshotCancel() error {
	id, err := parseID("snapshotId", c.req.SnapshotID)
	if err != nil {
		return err
	}
	if err := c.asyncOn(); err != nil {
		return c.snapshotFailed(err)
	}
	if err := c.s.svc.Search.Cancel(c.ctx, c.p.TenantID, id); err != nil {
		return c.snapshotFailed(err)
	}
	return c.snapshotReply(id)
}

// snapshotGet serves SnapshotGetRequest: one page (from 0, default size
// 10) of a finished snapshot, one event per entity.
func (c *crudCall) snapshotGet() error {
	id, err := parseID("snapshotId", c.req.SnapshotID)
	if err != nil {
		return err
	}
	size, page := c.paging(10)
	if page < 0 || size > entity.MaxPageSize || page > entity.MaxPageNumber {
		return c.entityFailed(apierr.New(apierr.BadRequest, "pageNumber must be in [0, 214748] and pageSize at most 10000"))
	}
	if err := c.asyncOn(); err != nil {
		return c.entityFailed(err)
	}
	pg, err := c.s.svc.Search.Results(c.ctx, c.p.TenantID, id, page, size)
	if err != nil {
		return c.entityFailed(err)
	}
	return c.entities(pg.Entities)
}
