package crud

import (
	"strconv"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/compute/wire"
	"svc/entity"
	"svc/platform/apierr"
)

// oneTransaction is the window that keeps a create in a single
// transaction: the gRPC creates never chunk (docs/decisions/0019-compute-members.md).
const oneTransaction = 1 << 30

// entityHandlers serve the entity and search types; the read types are in
// search_rpc.go.
func entityHandlers() map[string]crudHandler {
	return map[string]crudHandler{
		wire.TypeEntityCreateRequest:             {serve: (*crudCall).create},
		wire.TypeEntityCreateCollectionRequest:   {serve: (*crudCall).createCollection},
		wire.TypeEntityUpdateRequest:             {serve: (*crudCall).update},
		wire.TypeEntityUpdateCollectionRequest:   {serve: (*crudCall).updateCollection},
		wire.TypeEntityPatchRequest:              {serve: (*crudCall).patch},
		wire.TypeEntityDeleteRequest:             {serve: (*crudCall).delete},
		wire.TypeEntityDeleteAllRequest:          {serve: (*crudCall).deleteAll},
		wire.TypeEntityTransitionRequest:         {serve: (*crudCall).transition},
		wire.TypeEntityGetRequest:                {serve: (*crudCall).get},
		wire.TypeEntityGetAllRequest:             {serve: (*crudCall).getAll, stream: true},
		wire.TypeEntitySearchRequest:             {serve: (*crudCall).search, stream: true},
		wire.TypeEntityChangesMetadataGetRequest: {serve: (*crudCall).changes, stream: true},
		wire.TypeEntityStatsGetRequest:           {serve: (*crudCall).stats, stream: true},
		wire.TypeEntityStatsByStateGetRequest:    {serve: (*crudCall).statsByState, stream: true},
		wire.TypeEntitySnapshotSearchRequest:     {serve: (*crudCall).snapshotSubmit},
		wire.TypeSnapshotGetStatusRequest:        {serve: (*crudCall).snapshotStatus},
		wire.TypeSnapshotCancelRequest:           {serve: (*crudCall).snapshotCancel},
		wire.TypeSnapshotGetRequest:              {serve: (*crudCall).snapshotGet, stream: true},
	}
}

func (c *crudCall) txOK(tx [16]byte, entityIDs []string) error {
	return c.emit(wire.TypeEntityTransactionResponse, &wire.TransactionResponse{Base: c.ok(), RequestID: c.id,
		TransactionInfo: wire.TransactionInfo{TransactionID: uuid.UUID(tx).String(), EntityIDs: entityIDs}})
}

func (c *crudCall) txFailed(err error) error {
	return c.emit(wire.TypeEntityTransactionResponse, &wire.TransactionResponse{Base: c.failed(err), RequestID: c.id,
		TransactionInfo: wire.TransactionInfo{EntityIDs: []string{}}})
}

// document is the body a write passes to the entity service: the JSON
// value itself, or for dataFormat XML the XML text the JSON string holds.
func (c *crudCall) document(data json.RawMessage) (format string, body []byte, err error) {
	if len(data) == 0 || string(data) == "null" {
		return "", nil, invalid("data is required")
	}
	switch c.req.DataFormat {
	case "", "JSON":
		return "JSON", data, nil
	case "XML":
		var x string
		if err := json.Unmarshal(data, &x); err != nil {
			return "", nil, invalid("dataFormat XML needs data as a JSON string holding the XML document")
		}
		return "XML", []byte(x), nil
	}
	return "", nil, invalid("unsupported dataFormat %q; valid values: JSON, XML", c.req.DataFormat)
}

// create serves EntityCreateRequest: an object creates one entity, an
// array one per element, all in one transaction.
func (c *crudCall) create() error {
	p := c.req.Payload
	if p == nil {
		return invalid("payload is required")
	}
	key, err := c.modelKey(p.Model)
	if err != nil {
		return err
	}
	format, body, err := c.document(p.Data)
	if err != nil {
		return err
	}
	res, err := c.s.svc.Entities.Create(c.ctx, c.actor(), key, format, body, oneTransaction)
	if err != nil {
		return c.txFailed(err)
	}
	if len(res.Chunks) == 0 {
		return c.txFailed(res.Err)
	}
	ch := res.Chunks[0]
	return c.txOK(ch.TxID, ids(ch.IDs))
}

// createCollection serves EntityCreateCollectionRequest: every item in one
// transaction, no chunking.
func (c *crudCall) createCollection() error {
	if len(c.req.Payloads) == 0 {
		return invalid("payloads must not be empty")
	}
	if c.req.DataFormat != "" && c.req.DataFormat != "JSON" {
		return invalid("collection create accepts dataFormat JSON only")
	}
	items := make([]entity.NewEntity, len(c.req.Payloads))
	for i := range c.req.Payloads {
		p := &c.req.Payloads[i]
		key, err := c.modelKey(p.Model)
		if err != nil {
			return invalid("payloads[%d]: model with name and version is required", i)
		}
		if len(p.Data) == 0 {
			return invalid("payloads[%d]: data is required", i)
		}
		items[i] = entity.NewEntity{Model: key, Data: p.Data}
	}
	ch, err := c.s.svc.Entities.CreateEntities(c.ctx, c.actor(), items)
	if err != nil {
		return c.txFailed(err)
	}
	return c.txOK(ch.TxID, ids(ch.IDs))
}

func optional(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// update serves EntityUpdateRequest: a full replacement through the named
// transition or the loopback; ifMatch is optional as on PUT.
func (c *crudCall) update() error {
	p := c.req.Payload
	if p == nil {
		return invalid("payload is required")
	}
	id, err := parseID("payload.entityId", p.EntityID)
	if err != nil {
		return err
	}
	format, body, err := c.document(p.Data)
	if err != nil {
		return err
	}
	tx, err := c.s.svc.Entities.Update(c.ctx, c.actor(), id, format, body, optional(p.Transition), optional(p.IfMatch))
	if err != nil {
		return c.txFailed(err)
	}
	return c.txOK(tx, []string{p.EntityID})
}

// updateCollection serves EntityUpdateCollectionRequest with one
// transaction per item (docs/decisions/0019-compute-members.md), reporting the last
// transaction. The first failing item ends the request; the items before
// it stay committed.
func (c *crudCall) updateCollection() error {
	if len(c.req.Payloads) == 0 {
		return invalid("payloads must not be empty")
	}
	idsIn := make([][16]byte, len(c.req.Payloads))
	for i := range c.req.Payloads {
		p := &c.req.Payloads[i]
		id, err := parseID("payloads["+strconv.Itoa(i)+"].entityId", p.EntityID)
		if err != nil {
			return err
		}
		if len(p.Data) == 0 || string(p.Data) == "null" {
			return invalid("payloads[%d]: data is required", i)
		}
		idsIn[i] = id
	}
	var last [16]byte
	done := make([]string, 0, len(idsIn))
	for i := range c.req.Payloads {
		p := &c.req.Payloads[i]
		format, body, err := c.document(p.Data)
		if err != nil {
			return err
		}
		tx, err := c.s.svc.Entities.Update(c.ctx, c.actor(), idsIn[i], format, body, optional(p.Transition), optional(p.IfMatch))
		if err != nil {
			return c.txFailed(itemError(i, err))
		}
		last = tx
		done = append(done, p.EntityID)
	}
	return c.txOK(last, done)
}

// patch serves EntityPatchRequest. An empty ifMatch is the domain's 428
// PRECONDITION_REQUIRED; JSON_PATCH is its 501.
func (c *crudCall) patch() error {
	p := c.req.Payload
	if p == nil {
		return invalid("payload is required")
	}
	id, err := parseID("payload.entityId", p.EntityID)
	if err != nil {
		return err
	}
	var ctype string
	switch c.req.PatchFormat {
	case "", "MERGE_PATCH":
		ctype = "application/merge-patch+json"
	case "JSON_PATCH":
		ctype = "application/json-patch+json"
	default:
		return invalid("unsupported patchFormat %q; valid values: MERGE_PATCH, JSON_PATCH", c.req.PatchFormat)
	}
	if len(p.Patch) == 0 {
		return invalid("payload.patch is required")
	}
	tx, err := c.s.svc.Entities.Patch(c.ctx, c.actor(), id, "JSON", ctype, optional(p.IfMatch), p.Patch, optional(p.Transition))
	if err != nil {
		return c.txFailed(err)
	}
	return c.txOK(tx, []string{p.EntityID})
}

func (c *crudCall) delete() error {
	id, err := parseID("entityId", c.req.EntityID)
	if err != nil {
		return err
	}
	d, err := c.s.svc.Entities.Delete(c.ctx, c.actor(), id)
	if err != nil {
		return c.emit(wire.TypeEntityDeleteResponse, &wire.DeleteResponse{Base: c.failed(err), RequestID: c.id,
			EntityID: c.req.EntityID, TransactionID: nilUUID})
	}
	return c.emit(wire.TypeEntityDeleteResponse, &wire.DeleteResponse{Base: c.ok(), RequestID: c.id,
		EntityID: uuid.UUID(d.ID).String(), Model: wire.ModelSpec{Name: d.Model.Name, Version: d.Model.Version},
		TransactionID: uuid.UUID(d.TxID).String()})
}

// deleteAll serves EntityDeleteAllRequest: every live entity of the model
// in one transaction.
func (c *crudCall) deleteAll() error {
	key, err := c.modelKey(c.req.Model)
	if err != nil {
		return err
	}
	d, err := c.s.svc.Entities.DeleteByModel(c.ctx, c.actor(), key, nil, nil)
	if err != nil {
		return c.emit(wire.TypeEntityDeleteAllResponse, &wire.DeleteAllResponse{Base: c.failed(err), RequestID: c.id,
			ModelID: nilUUID, EntityIDs: []string{}})
	}
	return c.emit(wire.TypeEntityDeleteAllResponse, &wire.DeleteAllResponse{Base: c.ok(), RequestID: c.id,
		ModelID: d.ModelID.String(), NumDeleted: d.Removed, EntityIDs: []string{}})
}

// transition serves EntityTransitionRequest: the current data saved again
// through the named transition. The save is conditional on the revision
// read, so a change in between fails with ENTITY_MODIFIED instead of
// being overwritten.
func (c *crudCall) transition() error {
	id, err := parseID("entityId", c.req.EntityID)
	if err != nil {
		return err
	}
	if c.req.Transition == "" {
		return invalid("transition is required")
	}
	fail := func(err error) error {
		return c.emit(wire.TypeEntityTransitionResponse, &wire.TransitionResponse{Base: c.failed(err)})
	}
	a := c.actor()
	e, err := c.s.svc.Entities.Get(c.ctx, a.Tenant, id, nil, nil)
	if err != nil {
		return fail(err)
	}
	if _, err := c.s.svc.Entities.Update(c.ctx, a, id, "JSON", e.Data, c.req.Transition, uuid.UUID(e.TxID).String()); err != nil {
		return fail(err)
	}
	resp := &wire.TransitionResponse{Base: c.ok()}
	// The transitions now available are a courtesy; the transition itself
	// has committed, so failing to list them does not fail the request.
	if names, err := c.s.svc.Entities.Transitions(c.ctx, a.Tenant, id, nil, nil); err == nil {
		resp.AvailableTransitions = names
	} else if _, ok := apierr.As(err); !ok {
		c.s.log.Warn("listing transitions after a gRPC transition", "entityId", c.req.EntityID, "error", err)
	}
	return c.emit(wire.TypeEntityTransitionResponse, resp)
}
