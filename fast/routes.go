package fast

import "github.com/valyala/fasthttp"

// Access is who may call a route.
type Access uint8

const (
	// Public routes need no token (discovery, help, token endpoint).
	Public Access = iota
	// Authenticated routes need any valid principal.
	Authenticated
	// Admin routes need ROLE_ADMIN.
	Admin
)

// Tag groups of the API (docs/decisions/0027-discovery-and-help.md).
const (
	TagEntity   = "Entity Management"
	TagModel    = "Entity Model"
	TagSearch   = "Search"
	TagAccount  = "User, Account"
	TagMachine  = "User, Machine"
	TagAudit    = "Entity, Audit"
	TagMessage  = "Messaging"
	TagIAM      = "IAM"
	TagSQL      = "SQL Schema"
	TagPlatform = "Platform API"
)

// Route is one API operation under the context path. The table below is the
// single source for the router and the OpenAPI document, so the two cannot
// drift apart.
type Route struct {
	Method  string
	Path    string
	OpID    string
	Tag     string
	Summary string
	Access  Access
	// Handler is nil until the operation is built; the router then answers
	// 501 NOT_IMPLEMENTED.
	Handler fasthttp.RequestHandler
}

// apiRoutes lists every operation of the wire contract (71 paths, 87
// operations). Handlers are attached by area in Server.attachHandlers.
func apiRoutes() []Route {
	return []Route{
		{"GET", "/account", "accountGet", TagAccount, "Current account information", Authenticated, nil},
		{"GET", "/account/subscriptions", "accountSubscriptionsGet", TagAccount, "Subscriptions of the current account", Authenticated, nil},

		{"GET", "/audit/entity/{entityId}", "searchEntityAuditEvents", TagAudit, "Audit events of an entity", Authenticated, nil},
		{"GET", "/audit/entity/{entityId}/workflow/{transactionId}/finished", "getStateMachineFinishedEvent", TagAudit, "Workflow finished event of a transaction", Authenticated, nil},

		{"GET", "/clients", "listTechnicalUsers", TagMachine, "List machine clients", Admin, nil},
		{"POST", "/clients", "createTechnicalUser", TagMachine, "Create a machine client", Admin, nil},
		{"DELETE", "/clients/{clientId}", "deleteTechnicalUser", TagMachine, "Delete a machine client", Admin, nil},
		{"PUT", "/clients/{clientId}/secret", "resetTechnicalUserSecret", TagMachine, "Rotate a machine client's secret", Admin, nil},

		{"GET", "/entity/stats", "getEntityStatistics", TagEntity, "Entity counts by model", Authenticated, nil},
		{"GET", "/entity/stats/states", "getEntityStatisticsByState", TagEntity, "Entity counts by model and state", Authenticated, nil},
		{"GET", "/entity/stats/states/{entityName}/{modelVersion}", "getEntityStatisticsByStateForModel", TagEntity, "Entity counts by state for one model", Authenticated, nil},
		{"GET", "/entity/stats/{entityName}/{modelVersion}", "getEntityStatisticsForModel", TagEntity, "Entity count for one model", Authenticated, nil},
		{"POST", "/entity/stats/{entityName}/{modelVersion}/query", "queryGroupedEntityStatisticsForModel", TagEntity, "Grouped statistics query", Authenticated, nil},
		{"GET", "/entity/{entityId}", "getOneEntity", TagEntity, "Get one entity", Authenticated, nil},
		{"DELETE", "/entity/{entityId}", "deleteSingleEntity", TagEntity, "Delete one entity", Authenticated, nil},
		{"GET", "/entity/{entityId}/changes", "getEntityChangesMetadata", TagEntity, "Change history of an entity", Authenticated, nil},
		{"GET", "/entity/{entityId}/transitions", "getEntityTransitions", TagEntity, "Transitions available to an entity", Authenticated, nil},
		{"GET", "/entity/{entityName}/{modelVersion}", "getAllEntities", TagEntity, "List entities of a model", Authenticated, nil},
		{"DELETE", "/entity/{entityName}/{modelVersion}", "deleteEntities", TagEntity, "Delete entities of a model", Authenticated, nil},
		{"PUT", "/entity/{format}", "updateCollection", TagEntity, "Update a collection of entities", Authenticated, nil},
		{"POST", "/entity/{format}", "createCollection", TagEntity, "Create a collection of entities", Authenticated, nil},
		{"PUT", "/entity/{format}/{entityId}", "updateSingleWithLoopback", TagEntity, "Update an entity (loopback transition)", Authenticated, nil},
		{"PATCH", "/entity/{format}/{entityId}", "patchSingleWithLoopback", TagEntity, "Merge-patch an entity (loopback transition)", Authenticated, nil},
		{"PUT", "/entity/{format}/{entityId}/{transition}", "updateSingle", TagEntity, "Update an entity through a named transition", Authenticated, nil},
		{"PATCH", "/entity/{format}/{entityId}/{transition}", "patchSingle", TagEntity, "Merge-patch an entity through a named transition", Authenticated, nil},
		{"POST", "/entity/{format}/{entityName}/{modelVersion}", "create", TagEntity, "Create entities of a model", Authenticated, nil},
		{"GET", "/platform-api/entity/fetch/transitions", "fetchEntityTransitions", TagEntity, "Transitions available to an entity (platform form)", Authenticated, nil},

		{"DELETE", "/message", "deleteMessages", TagMessage, "Delete messages", Authenticated, nil},
		{"POST", "/message/new/{subject}", "newMessage", TagMessage, "Post a message", Authenticated, nil},
		{"GET", "/message/{messageId}", "getMessage", TagMessage, "Get a message", Authenticated, nil},
		{"DELETE", "/message/{messageId}", "deleteMessage", TagMessage, "Delete a message", Authenticated, nil},

		{"GET", "/model/", "getAvailableEntityModels", TagModel, "List entity models", Authenticated, nil},
		{"GET", "/model/export/{converter}/{entityName}/{modelVersion}", "exportMetadata", TagModel, "Export an entity model", Authenticated, nil},
		{"POST", "/model/import/{dataFormat}/{converter}/{entityName}/{modelVersion}", "importEntityModel", TagModel, "Import an entity model", Authenticated, nil},
		{"POST", "/model/validate/{entityName}/{modelVersion}", "validateEntityModel", TagModel, "Validate a document against a model", Authenticated, nil},
		{"DELETE", "/model/{entityName}/{modelVersion}", "deleteEntityModel", TagModel, "Delete an entity model", Authenticated, nil},
		{"POST", "/model/{entityName}/{modelVersion}/changeLevel/{changeLevel}", "setEntityModelChangeLevel", TagModel, "Set a model's change level", Authenticated, nil},
		{"PUT", "/model/{entityName}/{modelVersion}/lock", "lockEntityModel", TagModel, "Lock a model", Authenticated, nil},
		{"PUT", "/model/{entityName}/{modelVersion}/unlock", "unlockEntityModel", TagModel, "Unlock a model", Authenticated, nil},
		{"PUT", "/model/{entityName}/{modelVersion}/unique-keys", "setEntityModelUniqueKeys", TagModel, "Set a model's unique keys", Authenticated, nil},
		{"GET", "/model/{entityName}/{modelVersion}/workflow/export", "exportEntityModelWorkflow", TagModel, "Export a model's workflows", Authenticated, nil},
		{"POST", "/model/{entityName}/{modelVersion}/workflow/import", "importEntityModelWorkflow", TagModel, "Import workflows into a model", Authenticated, nil},

		{"POST", "/oauth/keys/keypair", "issueJwtKeyPair", TagIAM, "Create or rotate a signing keypair", Admin, nil},
		{"GET", "/oauth/keys/keypair/current", "getCurrentJwtKeyPair", TagIAM, "Current signing keypair (public part)", Admin, nil},
		{"DELETE", "/oauth/keys/keypair/{keyId}", "deleteJwtKeyPair", TagIAM, "Delete a signing keypair", Admin, nil},
		{"POST", "/oauth/keys/keypair/{keyId}/invalidate", "invalidateJwtKeyPair", TagIAM, "Invalidate a signing keypair with grace", Admin, nil},
		{"POST", "/oauth/keys/keypair/{keyId}/reactivate", "reactivateJwtKeyPair", TagIAM, "Reactivate a signing keypair", Admin, nil},
		{"GET", "/oauth/keys/trusted", "listTrustedKeys", TagIAM, "List trusted keys", Admin, nil},
		{"POST", "/oauth/keys/trusted", "registerTrustedKey", TagIAM, "Register a trusted key", Admin, nil},
		{"DELETE", "/oauth/keys/trusted/{keyId}", "deleteTrustedKey", TagIAM, "Delete a trusted key", Admin, nil},
		{"POST", "/oauth/keys/trusted/{keyId}/invalidate", "invalidateTrustedKey", TagIAM, "Invalidate a trusted key", Admin, nil},
		{"POST", "/oauth/keys/trusted/{keyId}/reactivate", "reactivateTrustedKey", TagIAM, "Reactivate a trusted key", Admin, nil},
		{"GET", "/oauth/oidc/providers", "listOidcProviders", TagIAM, "List OIDC providers", Authenticated, nil},
		{"POST", "/oauth/oidc/providers", "registerOidcProvider", TagIAM, "Register an OIDC provider", Admin, nil},
		{"POST", "/oauth/oidc/providers/reload", "reloadOidcProviders", TagIAM, "Re-fetch OIDC provider metadata", Admin, nil},
		{"DELETE", "/oauth/oidc/providers/{id}", "deleteOidcProvider", TagIAM, "Delete an OIDC provider", Admin, nil},
		{"PATCH", "/oauth/oidc/providers/{id}", "updateOidcProvider", TagIAM, "Update an OIDC provider", Admin, nil},
		{"POST", "/oauth/oidc/providers/{id}/invalidate", "invalidateOidcProvider", TagIAM, "Stop trusting an OIDC provider", Admin, nil},
		{"POST", "/oauth/oidc/providers/{id}/reactivate", "reactivateOidcProvider", TagIAM, "Resume trusting an OIDC provider", Admin, nil},
		{"POST", "/oauth/token", "getTechnicalUserToken", TagIAM, "Issue an access token", Public, nil},

		{"GET", "/platform-api/stream-data/config", "getStreamDataConfig", TagPlatform, "Get a stream-data configuration", Authenticated, nil},
		{"PUT", "/platform-api/stream-data/config", "updateStreamDataConfig", TagPlatform, "Update a stream-data configuration", Authenticated, nil},
		{"POST", "/platform-api/stream-data/config", "saveStreamDataConfig", TagPlatform, "Save a stream-data configuration", Authenticated, nil},
		{"DELETE", "/platform-api/stream-data/config", "deleteStreamDataConfig", TagPlatform, "Delete a stream-data configuration", Authenticated, nil},
		{"GET", "/platform-api/stream-data/config/list", "getAllConfigs", TagPlatform, "List stream-data configurations", Authenticated, nil},
		{"DELETE", "/platform-api/stream-data/delete", "delete", TagPlatform, "Delete stream data", Authenticated, nil},
		{"GET", "/platform-api/stream-data/export-all", "exportAll_1", TagPlatform, "Export all stream data", Authenticated, nil},
		{"GET", "/platform-api/stream-data/export-by-class", "exportAll", TagPlatform, "Export stream data of a class", Authenticated, nil},
		{"GET", "/platform-api/stream-data/export-by-ids", "exportByIds", TagPlatform, "Export stream data by ids", Authenticated, nil},
		{"POST", "/platform-api/stream-data/get", "getStreamData", TagPlatform, "Read stream data", Authenticated, nil},
		{"POST", "/platform-api/stream-data/import", "importContainer", TagPlatform, "Import stream data", Authenticated, nil},
		{"GET", "/platform-api/stream-data/index/list", "getIndexs", TagPlatform, "List stream-data indexes", Authenticated, nil},
		{"POST", "/platform-api/stream-data/query-plan", "getQueryPlan", TagPlatform, "Explain a stream-data query", Authenticated, nil},

		{"POST", "/search/async/{entityName}/{modelVersion}", "submitAsyncSearchJob", TagSearch, "Submit an asynchronous search", Authenticated, nil},
		{"GET", "/search/async/{jobId}", "getAsyncSearchResults", TagSearch, "Results of an asynchronous search", Authenticated, nil},
		{"PUT", "/search/async/{jobId}/cancel", "cancelAsyncSearch", TagSearch, "Cancel an asynchronous search", Authenticated, nil},
		{"GET", "/search/async/{jobId}/status", "getAsyncSearchStatus", TagSearch, "Status of an asynchronous search", Authenticated, nil},
		{"POST", "/search/direct/{entityName}/{modelVersion}", "searchEntities", TagSearch, "Search entities directly", Authenticated, nil},

		{"GET", "/sql/schema/", "getSchemaByName", TagSQL, "Get a SQL schema by name", Authenticated, nil},
		{"POST", "/sql/schema/", "saveSchema", TagSQL, "Save a SQL schema", Authenticated, nil},
		{"DELETE", "/sql/schema/", "deleteSchemaByName", TagSQL, "Delete a SQL schema by name", Authenticated, nil},
		{"GET", "/sql/schema/genTables/{entityModelId}", "genTables", TagSQL, "Generate SQL tables for a model", Authenticated, nil},
		{"GET", "/sql/schema/listAll", "getSchemas", TagSQL, "List SQL schemas", Authenticated, nil},
		{"PUT", "/sql/schema/putDefault/{schemaName}", "putSchema", TagSQL, "Create a default SQL schema", Authenticated, nil},
		{"POST", "/sql/schema/updateTables/{entityModelId}", "updateTables", TagSQL, "Update SQL tables of a model", Authenticated, nil},
		{"GET", "/sql/schema/{schemaId}", "getSchema", TagSQL, "Get a SQL schema", Authenticated, nil},
		{"DELETE", "/sql/schema/{schemaId}", "deleteSchema", TagSQL, "Delete a SQL schema", Authenticated, nil},
	}
}
