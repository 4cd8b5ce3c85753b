package crud

import (
	json "github.com/goccy/go-json"

	"svc/compute/wire"
	"svc/model"
)

// modelHandlers serve the entityModelManage types.
func modelHandlers() map[string]crudHandler {
	return map[string]crudHandler{
		wire.TypeModelImportRequest:     {serve: (*crudCall).modelImport},
		wire.TypeModelExportRequest:     {serve: (*crudCall).modelExport},
		wire.TypeModelTransitionRequest: {serve: (*crudCall).modelTransition},
		wire.TypeModelDeleteRequest:     {serve: (*crudCall).modelDelete},
		wire.TypeModelGetAllRequest:     {serve: (*crudCall).modelGetAll},
	}
}

// modelImport serves EntityModelImportRequest: SAMPLE_DATA (the default)
// infers from payload and merges into the unlocked model, SIMPLE_VIEW
// reads an export. For dataFormat XML the payload is a JSON string
// holding the XML document.
func (c *crudCall) modelImport() error {
	key, err := c.modelKey(c.mreq.Model)
	if err != nil {
		return err
	}
	p := c.mreq.Payload
	if len(p) == 0 || string(p) == "null" {
		return invalid("payload is required")
	}
	format, conv := c.mreq.DataFormat, c.mreq.Converter
	if format == "" {
		format = model.FormatJSON
	}
	if conv == "" {
		conv = model.ConvSampleData
	}
	body := []byte(p)
	if format == model.FormatXML {
		var x string
		if err := json.Unmarshal(p, &x); err != nil {
			return invalid("dataFormat XML needs payload as a JSON string holding the XML document")
		}
		body = []byte(x)
	}
	id, err := c.s.svc.Models.Import(c.ctx, c.p.TenantID, key, format, conv, body)
	if err != nil {
		return c.emit(wire.TypeModelImportResponse, &wire.ModelImportResponse{Base: c.failed(err), ModelID: nilUUID})
	}
	return c.emit(wire.TypeModelImportResponse, &wire.ModelImportResponse{Base: c.ok(), ModelID: id})
}

// modelExport serves EntityModelExportRequest; payload is the export
// envelope {currentState, model} of the converter (default JSON_SCHEMA).
func (c *crudCall) modelExport() error {
	key, err := c.modelKey(c.mreq.Model)
	if err != nil {
		return err
	}
	conv := c.mreq.Converter
	if conv == "" {
		conv = model.ConvJSONSchema
	}
	spec := wire.ModelSpec{Name: key.Name, Version: key.Version}
	out, err := c.s.svc.Models.AppendExport(c.ctx, c.p.TenantID, key, conv, nil)
	if err != nil {
		return c.emit(wire.TypeModelExportResponse, &wire.ModelExportResponse{Base: c.failed(err), Model: spec,
			ModelID: nilUUID, Payload: json.RawMessage(`{}`)})
	}
	return c.emit(wire.TypeModelExportResponse, &wire.ModelExportResponse{Base: c.ok(), Model: spec,
		ModelID: model.ID(key), Payload: out})
}

// modelTransition serves EntityModelTransitionRequest: LOCK or UNLOCK.
func (c *crudCall) modelTransition() error {
	key, err := c.modelKey(c.mreq.Model)
	if err != nil {
		return err
	}
	var r *model.ActionResult
	var state string
	switch c.mreq.Transition {
	case "LOCK":
		r, err = c.s.svc.Models.Lock(c.ctx, c.p.TenantID, key)
		state = model.Locked
	case "UNLOCK":
		r, err = c.s.svc.Models.Unlock(c.ctx, c.p.TenantID, key)
		state = model.Unlocked
	default:
		return invalid("unsupported model transition %q; valid values: LOCK, UNLOCK", c.mreq.Transition)
	}
	if err != nil {
		return c.emit(wire.TypeModelTransitionResponse, &wire.ModelTransitionResponse{Base: c.failed(err), ModelID: nilUUID})
	}
	return c.emit(wire.TypeModelTransitionResponse, &wire.ModelTransitionResponse{Base: c.ok(), ModelID: r.ModelID, State: state})
}

// modelDelete serves EntityModelDeleteRequest: an unlocked model without
// entities.
func (c *crudCall) modelDelete() error {
	key, err := c.modelKey(c.mreq.Model)
	if err != nil {
		return err
	}
	if _, err := c.s.svc.Models.Delete(c.ctx, c.p.TenantID, key); err != nil {
		return c.emit(wire.TypeModelDeleteResponse, &wire.Base{ID: c.id, Error: c.s.apiError(err)})
	}
	return c.emit(wire.TypeModelDeleteResponse, &wire.Base{ID: c.id, Success: true})
}

// modelGetAll serves EntityModelGetAllRequest: the tenant's models.
func (c *crudCall) modelGetAll() error {
	ms, err := c.s.svc.Models.List(c.ctx, c.p.TenantID)
	if err != nil {
		return c.emit(wire.TypeModelGetAllResponse, &wire.ModelGetAllResponse{Base: c.failed(err), Models: []wire.ModelInfo{}})
	}
	out := make([]wire.ModelInfo, len(ms))
	for i, m := range ms {
		out[i] = wire.ModelInfo{ID: m.ID, Name: m.ModelName, Version: m.ModelVersion, State: m.CurrentState}
	}
	return c.emit(wire.TypeModelGetAllResponse, &wire.ModelGetAllResponse{Base: c.ok(), Models: out})
}
