package wire

import json "github.com/goccy/go-json"

// CloudEvent types of the CRUD RPCs (entityManage, entityManageCollection,
// entityModelManage, entitySearch, entitySearchCollection).
const (
	TypeEntityCreateRequest             = "EntityCreateRequest"
	TypeEntityCreateCollectionRequest   = "EntityCreateCollectionRequest"
	TypeEntityUpdateRequest             = "EntityUpdateRequest"
	TypeEntityUpdateCollectionRequest   = "EntityUpdateCollectionRequest"
	TypeEntityPatchRequest              = "EntityPatchRequest"
	TypeEntityTransactionResponse       = "EntityTransactionResponse"
	TypeEntityDeleteRequest             = "EntityDeleteRequest"
	TypeEntityDeleteResponse            = "EntityDeleteResponse"
	TypeEntityDeleteAllRequest          = "EntityDeleteAllRequest"
	TypeEntityDeleteAllResponse         = "EntityDeleteAllResponse"
	TypeEntityTransitionRequest         = "EntityTransitionRequest"
	TypeEntityTransitionResponse        = "EntityTransitionResponse"
	TypeEntityGetRequest                = "EntityGetRequest"
	TypeEntityGetAllRequest             = "EntityGetAllRequest"
	TypeEntitySearchRequest             = "EntitySearchRequest"
	TypeEntityResponse                  = "EntityResponse"
	TypeEntityChangesMetadataGetRequest = "EntityChangesMetadataGetRequest"
	TypeEntityChangesMetadataResponse   = "EntityChangesMetadataResponse"
	TypeEntityStatsGetRequest           = "EntityStatsGetRequest"
	TypeEntityStatsResponse             = "EntityStatsResponse"
	TypeEntityStatsByStateGetRequest    = "EntityStatsByStateGetRequest"
	TypeEntityStatsByStateResponse      = "EntityStatsByStateResponse"
	TypeEntitySnapshotSearchRequest     = "EntitySnapshotSearchRequest"
	TypeEntitySnapshotSearchResponse    = "EntitySnapshotSearchResponse"
	TypeSnapshotGetStatusRequest        = "SnapshotGetStatusRequest"
	TypeSnapshotCancelRequest           = "SnapshotCancelRequest"
	TypeSnapshotGetRequest              = "SnapshotGetRequest"
	TypeModelImportRequest              = "EntityModelImportRequest"
	TypeModelImportResponse             = "EntityModelImportResponse"
	TypeModelExportRequest              = "EntityModelExportRequest"
	TypeModelExportResponse             = "EntityModelExportResponse"
	TypeModelTransitionRequest          = "EntityModelTransitionRequest"
	TypeModelTransitionResponse         = "EntityModelTransitionResponse"
	TypeModelDeleteRequest              = "EntityModelDeleteRequest"
	TypeModelDeleteResponse             = "EntityModelDeleteResponse"
	TypeModelGetAllRequest              = "EntityModelGetAllRequest"
	TypeModelGetAllResponse             = "EntityModelGetAllResponse"
)

// ModelSpec names a model in CRUD payloads.
type ModelSpec struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
}

// OrderBy is one sort key of a search request; source "meta" sorts by a
// metadata field, "data" (the default) by a path in the document.
type OrderBy struct {
	Path   string `json:"path"`
	Desc   bool   `json:"desc,omitempty"`
	Source string `json:"source,omitempty"`
}

// CrudRequest is the union of every CRUD request payload: each type reads
// the fields it defines and ignores the rest, so one decode serves all.
// Pointers keep "absent" apart from zero where the type needs it.
type CrudRequest struct {
	ID          string `json:"id"`
	DataFormat  string `json:"dataFormat,omitempty"`
	PatchFormat string `json:"patchFormat,omitempty"`
	// Payload is the single-item payload of create, update and patch.
	Payload *ItemPayload `json:"payload,omitempty"`
	// Payloads are the items of the collection requests.
	Payloads []ItemPayload `json:"payloads,omitempty"`

	EntityID    string     `json:"entityId,omitempty"`
	Transition  string     `json:"transition,omitempty"`
	Model       *ModelSpec `json:"model,omitempty"`
	PageSize    *int       `json:"pageSize,omitempty"`
	PageNumber  *int       `json:"pageNumber,omitempty"`
	PointInTime *string    `json:"pointInTime,omitempty"`

	Condition json.RawMessage `json:"condition,omitempty"`
	Limit     *int            `json:"limit,omitempty"`
	OrderBy   []OrderBy       `json:"orderBy,omitempty"`
	States    []string        `json:"states,omitempty"`
	// TrackingRead only matters inside a joined transaction, which these
	// RPCs do not support; it is accepted and ignored.
	TrackingRead bool   `json:"trackingRead,omitempty"`
	SnapshotID   string `json:"snapshotId,omitempty"`
}

// ModelRequest is the union of the entityModelManage request payloads.
type ModelRequest struct {
	ID         string     `json:"id"`
	DataFormat string     `json:"dataFormat,omitempty"`
	Converter  string     `json:"converter,omitempty"`
	Model      *ModelSpec `json:"model,omitempty"`
	// Payload is the sample data or SIMPLE_VIEW document of an import.
	Payload    json.RawMessage `json:"payload,omitempty"`
	Transition string          `json:"transition,omitempty"`
}

// ItemPayload is one entity of a create, update or patch.
type ItemPayload struct {
	Model      *ModelSpec      `json:"model,omitempty"`
	EntityID   string          `json:"entityId,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	Patch      json.RawMessage `json:"patch,omitempty"`
	Transition *string         `json:"transition,omitempty"`
	IfMatch    *string         `json:"ifMatch,omitempty"`
}

// TransactionInfo names the transaction of a write and its entities.
type TransactionInfo struct {
	TransactionID string   `json:"transactionId,omitempty"`
	EntityIDs     []string `json:"entityIds"`
}

// Base is the common part of every CRUD response.
type Base struct {
	ID       string   `json:"id"`
	Success  bool     `json:"success"`
	Warnings []string `json:"warnings,omitempty"`
	Error    *Error   `json:"error,omitempty"`
}

// TransactionResponse answers create, update, patch and their collections.
type TransactionResponse struct {
	Base
	RequestID       string          `json:"requestId"`
	TransactionInfo TransactionInfo `json:"transactionInfo"`
}

// DeleteResponse answers EntityDeleteRequest.
type DeleteResponse struct {
	Base
	RequestID     string    `json:"requestId"`
	EntityID      string    `json:"entityId"`
	Model         ModelSpec `json:"model"`
	TransactionID string    `json:"transactionId"`
}

// DeleteAllResponse answers EntityDeleteAllRequest.
type DeleteAllResponse struct {
	Base
	RequestID  string   `json:"requestId"`
	ModelID    string   `json:"modelId"`
	NumDeleted int64    `json:"numDeleted"`
	EntityIDs  []string `json:"entityIds"`
}

// TransitionResponse answers EntityTransitionRequest.
type TransitionResponse struct {
	Base
	AvailableTransitions []string `json:"availableTransitions,omitempty"`
}

// EntityResponse carries one entity (get, list, search, snapshot page).
type EntityResponse struct {
	Base
	RequestID string  `json:"requestId"`
	Payload   Payload `json:"payload"`
}

// ChangeMeta is one entry of an entity's change history.
type ChangeMeta struct {
	ChangeType    string `json:"changeType"`
	TimeOfChange  string `json:"timeOfChange"`
	User          string `json:"user"`
	TransactionID string `json:"transactionId,omitempty"`
	// AttributedKind and ExecutedBy as on GET /entity/{id}/changes;
	// omitted on revisions that did not record them.
	AttributedKind string     `json:"attributedKind,omitempty"`
	ExecutedBy     *Principal `json:"executedBy,omitempty"`
}

// Principal names who executed a change.
type Principal struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

// ChangesResponse carries one ChangeMeta.
type ChangesResponse struct {
	Base
	RequestID  string     `json:"requestId"`
	ChangeMeta ChangeMeta `json:"changeMeta"`
}

// StatsResponse is one model's entity count.
type StatsResponse struct {
	Base
	RequestID    string `json:"requestId"`
	ModelName    string `json:"modelName"`
	ModelVersion int    `json:"modelVersion"`
	Count        int64  `json:"count"`
}

// StatsByStateResponse is one (model, state) entity count.
type StatsByStateResponse struct {
	StatsResponse
	State string `json:"state"`
}

// SnapshotStatus describes an async search.
type SnapshotStatus struct {
	SnapshotID     string `json:"snapshotId"`
	Status         string `json:"status"`
	EntitiesCount  *int64 `json:"entitiesCount,omitempty"`
	ExpirationDate string `json:"expirationDate,omitempty"`
}

// SnapshotResponse answers the snapshot submit, status and cancel requests.
type SnapshotResponse struct {
	Base
	Status SnapshotStatus `json:"status"`
}

// ModelImportResponse answers EntityModelImportRequest.
type ModelImportResponse struct {
	Base
	ModelID string `json:"modelId"`
}

// ModelExportResponse answers EntityModelExportRequest; Payload is the
// export envelope {currentState, model}.
type ModelExportResponse struct {
	Base
	Model   ModelSpec       `json:"model"`
	ModelID string          `json:"modelId"`
	Payload json.RawMessage `json:"payload"`
}

// ModelTransitionResponse answers a model LOCK or UNLOCK.
type ModelTransitionResponse struct {
	Base
	ModelID string `json:"modelId"`
	State   string `json:"state"`
}

// ModelInfo is one model of EntityModelGetAllResponse.
type ModelInfo struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version int    `json:"version"`
	State   string `json:"state"`
}

// ModelGetAllResponse lists the tenant's models.
type ModelGetAllResponse struct {
	Base
	Models []ModelInfo `json:"models"`
}
