package fast

import json "github.com/goccy/go-json"

// opDoc is what the document says about one operation beyond the route
// table: parameters other than path ones, body, success response and the
// errors worth knowing. It is keyed by operation id so the route table stays
// the single list of operations.
type opDoc struct {
	desc string
	// pathSchemas overrides the default schema of a path parameter.
	pathSchemas map[string]*Schema
	params      []*Parameter
	body        *RequestBody
	ok          *Response
	errs        []errDoc
	// mock501 marks operations that answer 501 while SVC_IAM_MODE=mock.
	mock501 bool
	// oauth marks a client-authenticated OAuth endpoint: OAuth error
	// bodies and HTTP Basic security, like the token endpoint.
	oauth bool
}

type errDoc struct {
	status int
	desc   string
}

func e(status int, desc string) errDoc { return errDoc{status, desc} }

// keypairAccess ends every keypair operation's description: signing keys
// are the service's, not a tenant's.
const keypairAccess = " Service-wide: needs ROLE_ADMIN in the bootstrap tenant (SVC_BOOTSTRAP_TENANT_ID); an administrator of any other tenant gets 403 FORBIDDEN."

func param(in, name, desc string, schema *Schema, required bool) *Parameter {
	return &Parameter{Name: name, In: in, Description: desc, Schema: schema, Required: required}
}

func query(name, desc string, schema *Schema) *Parameter {
	return param("query", name, desc, schema, false)
}

func queryReq(name, desc string, schema *Schema) *Parameter {
	return param("query", name, desc, schema, true)
}

func header(name, desc string, schema *Schema, required bool) *Parameter {
	return param("header", name, desc, schema, required)
}

// arrayQuery is a repeated query key (?k=a&k=b); commas are not split.
func arrayQuery(name, desc string, items *Schema, required bool) *Parameter {
	p := param("query", name, desc, &Schema{Type: SchemaType{"array"}, Items: items}, required)
	p.Style = "form"
	p.Explode = true
	return p
}

func content(mediaType string, schema *Schema) map[string]*MediaType {
	return map[string]*MediaType{mediaType: {Schema: schema}}
}

func jsonBody(desc string, schema *Schema, required bool) *RequestBody {
	return &RequestBody{Description: desc, Required: required, Content: content("application/json", schema)}
}

func okJSON(desc string, schema *Schema) *Response {
	return &Response{Description: desc, Content: content("application/json", schema)}
}

func okEmpty(desc string) *Response { return &Response{Description: desc} }

func intRange(format string, min, max, def int64) *Schema {
	m := &Schema{Type: SchemaType{"integer"}, Format: format, Minimum: &min, Default: def}
	if max > 0 {
		m.Maximum = &max
	}
	return m
}

// opDocTable is built when the document is rendered and dropped after.
func opDocTable() map[string]opDoc {
	// Parameters shared by several operations.
	pPointInTime := query("pointInTime", "Read as at this instant (RFC 3339, or a bare date meaning midnight UTC); default now."+instantRangeDoc, dateTime(""))
	pTxID := query("transactionId", "Read the version written by this transaction; not together with pointInTime.", uuidS(""))
	pTxTimeout := query("transactionTimeoutMillis", "Accepted for compatibility; no effect.", intRange("int64", 0, 0, 10000))
	pWaitConsist := query("waitForConsistencyAfter", "Accepted for compatibility; no effect.", &Schema{Type: SchemaType{"boolean"}, Default: false})
	pTxWindow := query("transactionWindow", "Entities per transaction when the body is an array; each chunk commits on its own.", intRange("int32", 1, 1000, 100))
	pTxSize := query("transactionSize", "Accepted for compatibility; the delete runs in one transaction.", intRange("int32", 1, 0, 1000))
	pSort := arrayQuery("sort", "Sort key `[@]path[:asc|desc]`, repeatable (at most 16); `@` names metadata (state, creationDate, lastUpdateTime, transitionForLatestSave, transactionId, id). Entity id ascending breaks ties.", &Schema{Type: SchemaType{"string"}}, false)
	pStates := arrayQuery("states", "Only these states (repeat the key); default all.", &Schema{Type: SchemaType{"string"}}, false)
	pIfMatchPut := header("If-Match", "Expected `meta.transactionId` (bare, unquoted); a mismatch answers 412.", &Schema{Type: SchemaType{"string"}}, false)
	// The wire contract marks If-Match optional on PATCH too: svc itself
	// answers its absence with 428 and an explanation, which a client-side
	// validator rejecting the request early would hide.
	pIfMatchPat := header("If-Match", "Expected `meta.transactionId` (bare, unquoted), or `*` for any version. "+
		"Mandatory in practice: a PATCH without it answers 428 PRECONDITION_REQUIRED.", &Schema{Type: SchemaType{"string"}}, false)

	eBadParam := e(400, "BAD_REQUEST: a parameter does not parse (properties.parameter names it).")
	eModel404 := e(404, "MODEL_NOT_FOUND: no such model.")
	eEntity404 := e(404, "ENTITY_NOT_FOUND: no such entity.")
	eConflict409 := e(409, "CONFLICT (retryable): a concurrent transaction won; retry.")
	// Function conditions are decided by compute members (search, grouped
	// statistics, delete by condition).
	eFunction503 := e(503, "NO_COMPUTE_MEMBER_FOR_TAG, DISPATCH_TIMEOUT or COMPUTE_MEMBER_DISCONNECTED (retryable): a function condition's compute member is missing, too slow or gone.")
	eSearch400 := e(400, "BAD_REQUEST, INVALID_CONDITION, INVALID_FIELD_PATH or CONDITION_TYPE_MISMATCH: the condition or sort is invalid.")
	eJob404 := e(404, "SEARCH_JOB_NOT_FOUND: unknown or expired job.")
	eKeypair404 := e(404, "KEYPAIR_NOT_FOUND.")
	eTrusted404 := e(404, "TRUSTED_KEY_NOT_FOUND, or FEATURE_DISABLED while SVC_IAM_TRUSTED_KEY_REGISTRATION_ENABLED=false.")
	eOidc404 := e(404, "OIDC_PROVIDER_NOT_FOUND.")
	eClient404 := e(404, "M2M_CLIENT_NOT_FOUND.")
	eWorkflow := e(400, "TRANSITION_NOT_FOUND or WORKFLOW_FAILED: the workflow refused the change.")
	eUniqueKey := e(422, "INVALID_UNIQUE_KEY: the entity sets only part of a unique key.")
	eLocked409 := e(409, "MODEL_ALREADY_LOCKED: the model is locked.")
	eTooLarge := e(413, "BAD_REQUEST: the body is over 10 MiB.")
	eTooMany := e(413, "TOO_MANY_ENTITIES (svc extension): more entities than SVC_MAX_ENTITIES_PER_REQUEST (default 10000); nothing is written.")

	// Bodies shared by several operations.
	entityWriteBody := &RequestBody{
		Description: "The entity: a JSON object (format JSON) or an XML document (format XML).",
		Required:    true,
		Content: map[string]*MediaType{
			"application/json": {Schema: freeObj("")},
			"application/xml":  {Schema: &Schema{Type: SchemaType{"string"}}},
		},
	}
	mergePatchBody := &RequestBody{
		Description: "RFC 7386 merge patch: members overwrite, nested objects merge, null deletes, arrays replace. Content-Type must be application/merge-patch+json (application/json-patch+json answers 501).",
		Required:    true,
		Content:     content("application/merge-patch+json", freeObj("")),
	}
	conditionBody := jsonBody("The search condition; match everything with `{\"type\":\"group\",\"operator\":\"AND\",\"conditions\":[]}`.", ref("Condition"), true)
	txResult := okJSON("The write transaction.", ref("EntityTransactionResponse"))
	txResults := okJSON("One element per chunk; a failed later chunk is the last element, with `error`.", arr(ref("EntityTransactionResponse"), ""))
	modelAction := okJSON("Done.", ref("ModelActionResult"))
	transitions := okJSON("Names of the transitions declared on the entity's current state, in declaration order.", arr(&Schema{Type: SchemaType{"string"}}, ""))

	entityFormatPath := map[string]*Schema{"format": enum("Body format.", "JSON", "XML")}

	docs := map[string]opDoc{
		// Account.
		"accountGet": {
			ok: okJSON("The account.", ref("AccountInfo")),
		},
		"accountSubscriptionsGet": {
			desc: "Not available yet: always answers 501.",
			ok:   okJSON("The subscriptions.", ref("Subscriptions")),
			errs: []errDoc{e(501, "NOT_IMPLEMENTED.")},
		},

		// Audit.
		"searchEntityAuditEvents": {
			params: []*Parameter{
				arrayQuery("eventType", "Event kinds (repeat the key); default EntityChange and StateMachine.", enum("", "EntityChange", "StateMachine", "System"), false),
				query("severity", "Only this severity.", enum("", "ERROR", "WARN", "INFO", "DEBUG")),
				query("fromUtcTime", "From this instant, inclusive."+instantRangeDoc, dateTime("")),
				query("toUtcTime", "Up to this instant, exclusive."+instantRangeDoc, dateTime("")),
				query("transactionId", "Only events of this transaction.", uuidS("")),
				query("cursor", "`nextCursor` of the previous page.", &Schema{Type: SchemaType{"string"}}),
				query("limit", "Page size; values over 1000 are clamped.", intRange("int32", 1, 0, 20)),
			},
			ok:   okJSON("A page of events, newest first.", ref("AuditEventsPage")),
			errs: []errDoc{eBadParam, e(404, "ENTITY_NOT_FOUND: the entity has no history.")},
		},
		"getStateMachineFinishedEvent": {
			desc: "Use the transactionId returned by a write to learn when its workflow finished.",
			ok:   okJSON("The STATE_MACHINE_FINISH event.", ref("AuditEvent")),
			errs: []errDoc{eBadParam, e(404, "ENTITY_NOT_FOUND: no finished event for this entity and transaction.")},
		},

		// Machine clients.
		"listTechnicalUsers": {
			ok:      okJSON("The tenant's machine clients.", arr(ref("TechnicalUser"), "")),
			mock501: true,
		},
		"createTechnicalUser": {
			desc:    "The client acts in the caller's tenant. The response is the only time the secret is shown.",
			params:  []*Parameter{query("withAdminRole", "Also grant ROLE_ADMIN; honoured only when SVC_IAM_M2M_ADMIN_ROLE_ENABLED=true.", &Schema{Type: SchemaType{"boolean"}, Default: false})},
			ok:      okJSON("The new client's credentials.", ref("TechnicalUserCredentials")),
			errs:    []errDoc{e(404, "FEATURE_DISABLED: withAdminRole=true while admin machine clients are disabled.")},
			mock501: true,
		},
		"deleteTechnicalUser": {
			ok:      okJSON("Deleted.", ref("TechnicalUserDeleted")),
			errs:    []errDoc{e(400, "BAD_REQUEST: invalid clientId."), eClient404},
			mock501: true,
		},
		"resetTechnicalUserSecret": {
			desc:    "The old secret stops working at once.",
			ok:      okJSON("The credentials with the new secret.", ref("TechnicalUserCredentials")),
			errs:    []errDoc{e(400, "BAD_REQUEST: invalid clientId."), eClient404},
			mock501: true,
		},

		// Entity statistics.
		"getEntityStatistics": {
			params: []*Parameter{pPointInTime},
			ok:     okJSON("One count per registered model, zero counts included.", arr(ref("ModelStats"), "")),
		},
		"getEntityStatisticsByState": {
			params: []*Parameter{pPointInTime, pStates},
			ok:     okJSON("Counts of the (model, state) pairs that have entities.", arr(ref("ModelStateStats"), "")),
			errs:   []errDoc{e(400, "BAD_REQUEST: more than 1000 states.")},
		},
		"getEntityStatisticsByStateForModel": {
			params: []*Parameter{pPointInTime, pStates},
			ok:     okJSON("Counts by state.", arr(ref("ModelStateStats"), "")),
			errs:   []errDoc{eBadParam, eModel404},
		},
		"getEntityStatisticsForModel": {
			params: []*Parameter{pPointInTime},
			ok:     okJSON("The count.", ref("ModelStats")),
			errs:   []errDoc{eBadParam, eModel404},
		},
		"queryGroupedEntityStatisticsForModel": {
			desc: "Groups the model's entities by state and/or data paths and aggregates numeric fields. Buckets are sorted by count, descending.",
			body: jsonBody("The query.", ref("GroupedStatsRequest"), true),
			ok:   okJSON("The groups.", arr(ref("GroupedStatsBucket"), "")),
			errs: []errDoc{
				e(400, "MALFORMED_REQUEST, MISSING_GROUP_BY, INVALID_GROUP_BY_PATH, DUPLICATE_GROUP_BY, INVALID_AGGREGATION_OP, INVALID_AGGREGATION_FIELD, DUPLICATE_AGGREGATION_ALIAS, INVALID_LIMIT, INVALID_CONDITION, FUNCTION_CONDITION_FAILED, SCAN_BUDGET_EXHAUSTED."),
				eModel404, eTooLarge,
				e(422, "GROUP_CARDINALITY_EXCEEDED: more groups than SVC_STATS_GROUP_MAX."),
				eFunction503,
			},
		},

		// Entities.
		"getOneEntity": {
			params: []*Parameter{pPointInTime, pTxID},
			ok:     okJSON("The entity.", ref("EntityEnvelope")),
			errs:   []errDoc{e(400, "BAD_REQUEST: bad parameter, or both pointInTime and transactionId."), eEntity404},
		},
		"deleteSingleEntity": {
			desc: "Soft delete: history and as-at reads keep the entity.",
			ok:   okJSON("Deleted.", ref("SingleDeleteResult")),
			errs: []errDoc{eBadParam, eEntity404, eConflict409},
		},
		"getEntityChangesMetadata": {
			params: []*Parameter{query("pointInTime", "Only versions at or before this instant."+instantRangeDoc, dateTime(""))},
			ok:     okJSON("Versions, newest first (at most 1000).", arr(ref("EntityChange"), "")),
			errs:   []errDoc{eBadParam, eEntity404},
		},
		"getEntityTransitions": {
			params: []*Parameter{pPointInTime, query("transactionId", "Evaluate as at the time of this transaction.", uuidS(""))},
			ok:     transitions,
			errs:   []errDoc{e(400, "BAD_REQUEST: bad pointInTime, unknown transactionId, or both given."), eEntity404},
		},
		"fetchEntityTransitions": {
			desc: "Same answer as GET /entity/{entityId}/transitions, evaluated now.",
			params: []*Parameter{
				queryReq("entityClass", "Model as `<name>.<version>`; when it is not of that form the entity's own model is used.", &Schema{Type: SchemaType{"string"}}),
				queryReq("entityId", "Entity id.", uuidS("")),
			},
			ok:   transitions,
			errs: []errDoc{e(400, "BAD_REQUEST: a parameter is missing."), eEntity404},
		},
		"getAllEntities": {
			params: []*Parameter{
				query("pageSize", "Entities per page; 0 gives an empty page.", intRange("int32", 0, 10000, 20)),
				query("pageNumber", "Zero-based page.", intRange("int32", 0, 214748, 0)),
				pPointInTime,
			},
			ok:   okJSON("A page of entities in id order.", arr(ref("EntityEnvelope"), "")),
			errs: []errDoc{eBadParam, eModel404},
		},
		"deleteEntities": {
			desc: "With a condition body, deletes the matching entities; with an empty body, deletes them all.",
			params: []*Parameter{
				pTxSize,
				query("pointInTime", "Select the entities to delete as at this instant."+instantRangeDoc, dateTime("")),
				query("verbose", "List the removed ids.", &Schema{Type: SchemaType{"boolean"}, Default: false}),
			},
			body: jsonBody("Optional condition selecting the entities.", ref("Condition"), false),
			ok:   okJSON("What was removed.", ref("EntityDeleteResult")),
			errs: []errDoc{eBadParam, e(400, "INVALID_CONDITION, INVALID_FIELD_PATH, CONDITION_TYPE_MISMATCH, FUNCTION_CONDITION_FAILED or SCAN_BUDGET_EXHAUSTED."), eModel404, eConflict409, eFunction503},
		},
		"updateCollection": {
			desc:        "Updates many entities, `transactionWindow` per transaction. An item whose `ifMatch` is stale is reported in `failed` and its chunk still commits.",
			pathSchemas: map[string]*Schema{"format": enum("Only JSON.", "JSON")},
			params:      []*Parameter{pTxWindow, pTxTimeout, pWaitConsist},
			body:        jsonBody("The updates.", withDesc(&Schema{Type: SchemaType{"array"}, MinItems: ptr(1), Items: ref("CollectionUpdateItem")}, ""), true),
			ok:          txResults,
			errs:        []errDoc{e(400, "BAD_REQUEST: empty collection, missing id, invalid payload, or format is not JSON."), eWorkflow, eEntity404, eConflict409, e(409, "UNIQUE_VIOLATION: a unique key is taken."), eUniqueKey, eTooMany},
		},
		"createCollection": {
			desc:        "Creates entities of any models, `transactionWindow` per transaction. Each target model must be locked.",
			pathSchemas: map[string]*Schema{"format": enum("Ignored: the body is always JSON.", "JSON", "XML")},
			params:      []*Parameter{pTxWindow, pTxTimeout, pWaitConsist},
			body:        jsonBody("The entities.", arr(ref("CollectionCreateItem"), ""), true),
			ok:          txResults,
			errs:        []errDoc{e(400, "BAD_REQUEST, INCOMPATIBLE_TYPE or POLYMORPHIC_SLOT: an item is invalid (the message names it)."), eWorkflow, eModel404, e(409, "MODEL_NOT_LOCKED, UNIQUE_VIOLATION or CONFLICT."), eUniqueKey, eTooMany},
		},
		"updateSingleWithLoopback": {
			desc:        "Replaces the entity and re-enters its current state, so automated transitions may fire.",
			pathSchemas: entityFormatPath,
			params:      []*Parameter{pIfMatchPut, pTxTimeout, pWaitConsist},
			body:        entityWriteBody,
			ok:          txResult,
			errs:        []errDoc{e(400, "BAD_REQUEST, INCOMPATIBLE_TYPE or POLYMORPHIC_SLOT: the body is invalid for the model."), eWorkflow, eEntity404, e(409, "UNIQUE_VIOLATION or CONFLICT."), e(412, "ENTITY_MODIFIED: If-Match is stale."), eUniqueKey},
		},
		"patchSingleWithLoopback": {
			desc:        "Merge-patches the stored entity, validates the result strictly against the model, then runs the loopback.",
			pathSchemas: map[string]*Schema{"format": enum("Only JSON.", "JSON")},
			params:      []*Parameter{pIfMatchPat, pTxTimeout, pWaitConsist},
			body:        mergePatchBody,
			ok:          txResult,
			errs:        []errDoc{e(400, "BAD_REQUEST or INCOMPATIBLE_TYPE: the patch or its result is invalid; a patch nested deeper than 256 levels is refused before merging (`properties.limit` MaxDepth), a merged document over 10 MiB too (MaxBytes)."), eWorkflow, eEntity404, e(409, "UNIQUE_VIOLATION or CONFLICT."), e(412, "ENTITY_MODIFIED: If-Match is stale."), e(415, "UNSUPPORTED_MEDIA_TYPE: format or Content-Type is not merge-patch JSON."), eUniqueKey, e(428, "PRECONDITION_REQUIRED: no If-Match.")},
		},
		"updateSingle": {
			desc:        "Replaces the entity and fires the named transition from its current state.",
			pathSchemas: entityFormatPath,
			params:      []*Parameter{pIfMatchPut, pTxTimeout, pWaitConsist},
			body:        entityWriteBody,
			ok:          txResult,
			errs:        []errDoc{e(400, "BAD_REQUEST, INCOMPATIBLE_TYPE, TRANSITION_NOT_FOUND or WORKFLOW_FAILED."), eEntity404, e(409, "UNIQUE_VIOLATION or CONFLICT."), e(412, "ENTITY_MODIFIED: If-Match is stale."), eUniqueKey},
		},
		"patchSingle": {
			desc:        "Merge-patches the stored entity, then fires the named transition.",
			pathSchemas: map[string]*Schema{"format": enum("Only JSON.", "JSON")},
			params:      []*Parameter{pIfMatchPat, pTxTimeout, pWaitConsist},
			body:        mergePatchBody,
			ok:          txResult,
			errs:        []errDoc{e(400, "BAD_REQUEST, INCOMPATIBLE_TYPE, TRANSITION_NOT_FOUND or WORKFLOW_FAILED; the merge-patch limits (MaxDepth 256, MaxBytes 10 MiB) are checked as on the loopback PATCH."), eEntity404, e(409, "UNIQUE_VIOLATION or CONFLICT."), e(412, "ENTITY_MODIFIED: If-Match is stale."), e(415, "UNSUPPORTED_MEDIA_TYPE."), eUniqueKey, e(428, "PRECONDITION_REQUIRED: no If-Match.")},
		},
		"create": {
			desc:        "Creates one entity (object body) or many (array body, `transactionWindow` per transaction). The model must be locked.",
			pathSchemas: entityFormatPath,
			params:      []*Parameter{pTxWindow, pTxTimeout, pWaitConsist},
			body: &RequestBody{
				Description: "One entity, or with format JSON an array of entities; with format XML an XML document.",
				Required:    true,
				Content: map[string]*MediaType{
					"application/json": {Schema: &Schema{OneOf: []*Schema{freeObj("One entity."), arr(freeObj(""), "Several entities.")}}},
					"application/xml":  {Schema: &Schema{Type: SchemaType{"string"}}},
				},
			},
			ok:   txResults,
			errs: []errDoc{e(400, "BAD_REQUEST, INCOMPATIBLE_TYPE or POLYMORPHIC_SLOT: the body is invalid for the model."), eWorkflow, eModel404, e(409, "MODEL_NOT_LOCKED, UNIQUE_VIOLATION or CONFLICT."), eUniqueKey, eTooMany},
		},

		// Messaging.
		"deleteMessages": {
			params: []*Parameter{pTxSize},
			body:   jsonBody("Ids of the messages to delete.", arr(uuidS(""), ""), true),
			ok:     okJSON("The ids as sent (unknown ids are not reported).", arr(ref("MessageBatchDeleteResult"), "")),
			errs:   []errDoc{e(400, "BAD_REQUEST: the body is not an array of UUIDs."), eTooLarge},
		},
		"newMessage": {
			desc: "Stores a message. Content-Type and Content-Length are required request headers (so chunked uploads are refused); the X- headers are stored in the message header.",
			params: []*Parameter{
				header("Content-Encoding", "Default UTF-8.", &Schema{Type: SchemaType{"string"}}, false),
				header("X-Message-ID", "", &Schema{Type: SchemaType{"string"}}, false),
				header("X-User-ID", "", &Schema{Type: SchemaType{"string"}}, false),
				header("X-Recipient", "", &Schema{Type: SchemaType{"string"}}, false),
				header("X-Reply-To", "", &Schema{Type: SchemaType{"string"}}, false),
				header("X-Correlation-ID", "", &Schema{Type: SchemaType{"string"}}, false),
				pTxTimeout,
			},
			body: jsonBody("The message.", ref("NewMessageRequest"), true),
			ok:   okJSON("One element naming the new message id.", arr(ref("EntityTransactionResponse"), "")),
			errs: []errDoc{e(400, "BAD_REQUEST: invalid subject, body or headers."), eTooLarge},
		},
		"getMessage": {
			ok:   okJSON("The message.", ref("EdgeMessage")),
			errs: []errDoc{eBadParam, e(404, "ENTITY_NOT_FOUND: no such message.")},
		},
		"deleteMessage": {
			ok:   okJSON("Deleted.", ref("MessageDeleteResult")),
			errs: []errDoc{eBadParam, e(404, "ENTITY_NOT_FOUND: no such message.")},
		},

		// Models.
		"getAvailableEntityModels": {
			desc: "The trailing slash is part of the path.",
			ok:   okJSON("The tenant's models.", arr(ref("EntityModel"), "")),
		},
		"exportMetadata": {
			desc:        "SIMPLE_VIEW gives svc's node-path view of the inferred schema; JSON_SCHEMA gives a JSON Schema document.",
			pathSchemas: map[string]*Schema{"converter": enum("Export format.", "SIMPLE_VIEW", "JSON_SCHEMA")},
			ok:          okJSON("The export.", ref("ModelExport")),
			errs:        []errDoc{e(400, "BAD_REQUEST: unknown converter (properties.parameter, properties.invalidValue)."), e(404, "MODEL_NOT_FOUND (checked before the converter).")},
		},
		"importEntityModel": {
			desc: "SAMPLE_DATA infers a schema from a sample document and merges it into the model (created UNLOCKED if absent); SIMPLE_VIEW loads an export unchanged.",
			pathSchemas: map[string]*Schema{
				"converter":  enum("How the body is read.", "SAMPLE_DATA", "SIMPLE_VIEW"),
				"dataFormat": enum("Body format.", "JSON", "XML"),
			},
			body: &RequestBody{
				Description: "A sample document (JSON or XML), or a SIMPLE_VIEW export.",
				Required:    true,
				Content: map[string]*MediaType{
					"application/json": {Schema: anyJSON("")},
					"application/xml":  {Schema: &Schema{Type: SchemaType{"string"}}},
				},
			},
			ok:   okJSON("The model id.", uuidS("Model id (UUIDv5 of `<name>.<version>`).")),
			errs: []errDoc{e(400, "BAD_REQUEST: unknown converter or data format, or the body does not parse."), eLocked409, e(422, "INVALID_UNIQUE_KEY_DEFINITION: the change would break a unique key.")},
		},
		"validateEntityModel": {
			desc: "A document that does not fit still answers 200, with success false.",
			body: jsonBody("The document to check.", freeObj(""), true),
			ok:   okJSON("The verdict.", ref("ModelActionResult")),
			errs: []errDoc{eBadParam, eModel404},
		},
		"deleteEntityModel": {
			desc: "Only an unlocked model without entities can be deleted.",
			ok:   modelAction,
			errs: []errDoc{eBadParam, eModel404, e(409, "MODEL_ALREADY_LOCKED or MODEL_HAS_ENTITIES.")},
		},
		"setEntityModelChangeLevel": {
			desc:        "Lets entity writes (POST and PUT, not PATCH) extend the schema up to this level instead of failing. Each level includes the ones before it.",
			pathSchemas: map[string]*Schema{"changeLevel": enum("How far writes may extend the model.", "ARRAY_LENGTH", "ARRAY_ELEMENTS", "TYPE", "STRUCTURAL")},
			ok:          modelAction,
			errs:        []errDoc{e(400, "INVALID_CHANGE_LEVEL (properties.validValues lists the levels)."), eModel404},
		},
		"lockEntityModel": {
			desc: "Entities can be created only in a locked model.",
			ok:   modelAction,
			errs: []errDoc{eBadParam, eModel404, eLocked409},
		},
		"unlockEntityModel": {
			ok:   modelAction,
			errs: []errDoc{eBadParam, eModel404, e(409, "MODEL_ALREADY_UNLOCKED or MODEL_HAS_ENTITIES.")},
		},
		"setEntityModelUniqueKeys": {
			desc: "Values of a unique key must be unique among the model's live entities; entities with none of the key's fields are exempt.",
			body: jsonBody("The keys.", ref("SetUniqueKeysRequest"), true),
			ok:   modelAction,
			errs: []errDoc{e(400, "BAD_REQUEST: the body does not parse."), eModel404, eLocked409, e(422, "INVALID_UNIQUE_KEY_DEFINITION or COMPOSITE_KEY_UNSUPPORTED.")},
		},
		"exportEntityModelWorkflow": {
			ok:   okJSON("The workflows.", ref("WorkflowExport")),
			errs: []errDoc{eBadParam, e(404, "MODEL_NOT_FOUND, or WORKFLOW_NOT_FOUND when none were imported.")},
		},
		"importEntityModelWorkflow": {
			body: jsonBody("The workflows.", ref("WorkflowImportRequest"), true),
			ok:   okJSON("Imported.", ref("WorkflowImportResult")),
			errs: []errDoc{e(400, "BAD_REQUEST, WORKFLOW_SCHEMA_VERSION_UNSUPPORTED or VALIDATION_FAILED."), eModel404},
		},

		// IAM: signing keypairs.
		"issueJwtKeyPair": {
			desc:    "Creates an RSA-2048 keypair; with invalidateCurrent it also retires the current key of that audience after a grace period." + keypairAccess,
			body:    jsonBody("The keypair to create.", ref("IssueJwtKeyPairRequest"), true),
			ok:      okJSON("The new keypair (public part).", ref("JwtKeyPair")),
			errs:    []errDoc{e(400, "BAD_REQUEST or UNSUPPORTED_ALGORITHM.")},
			mock501: true,
		},
		"getCurrentJwtKeyPair": {
			desc:    "Returns the public part of the active signing keypair of an audience." + keypairAccess,
			params:  []*Parameter{query("audience", "Whose keypair.", withDesc(&Schema{Type: SchemaType{"string"}, Enum: []string{"human", "client"}, Default: "client"}, ""))},
			ok:      okJSON("The active keypair (public part).", ref("JwtKeyPair")),
			errs:    []errDoc{e(400, "BAD_REQUEST: invalid audience."), e(404, "KEYPAIR_NOT_FOUND: none is active.")},
			mock501: true,
		},
		"deleteJwtKeyPair": {
			desc:    "Deletes a signing keypair at once; tokens it signed stop verifying." + keypairAccess,
			ok:      okEmpty("Deleted; no body."),
			errs:    []errDoc{eKeypair404},
			mock501: true,
		},
		"invalidateJwtKeyPair": {
			desc:    "Stops a keypair signing and ends its validity after the grace period." + keypairAccess,
			body:    jsonBody("Optional grace period.", ref("InvalidateKeyRequest"), false),
			ok:      okEmpty("Invalidated; no body."),
			errs:    []errDoc{e(400, "BAD_REQUEST: invalid grace period."), eKeypair404},
			mock501: true,
		},
		"reactivateJwtKeyPair": {
			desc:    "Reopens a keypair's validity window until the given validTo." + keypairAccess,
			body:    jsonBody("The new validity.", ref("ReactivateKeyRequest"), true),
			ok:      okJSON("The keypair.", ref("JwtKeyPair")),
			errs:    []errDoc{e(400, "BAD_REQUEST: validTo missing, past, or before validFrom."), eKeypair404},
			mock501: true,
		},

		// IAM: trusted keys.
		"listTrustedKeys": {
			ok:      okJSON("The tenant's trusted keys.", arr(ref("TrustedKey"), "")),
			errs:    []errDoc{e(404, "FEATURE_DISABLED: trusted-key registration is off.")},
			mock501: true,
		},
		"registerTrustedKey": {
			desc:    "Idempotent for the same tenant and keyId.",
			body:    jsonBody("The key.", ref("RegisterTrustedKeyRequest"), true),
			ok:      okJSON("The key as stored.", ref("TrustedKey")),
			errs:    []errDoc{e(400, "BAD_REQUEST, UNSUPPORTED_KEY_TYPE or TRUSTED_KEY_CAP_REACHED."), e(404, "FEATURE_DISABLED: trusted-key registration is off."), e(409, "KEY_OWNED_BY_DIFFERENT_TENANT.")},
			mock501: true,
		},
		"deleteTrustedKey": {
			pathSchemas: map[string]*Schema{"keyId": keyIDSchema("")},
			ok:          okEmpty("Deleted; no body."),
			errs:        []errDoc{e(400, "BAD_REQUEST: invalid keyId."), eTrusted404},
			mock501:     true,
		},
		"invalidateTrustedKey": {
			pathSchemas: map[string]*Schema{"keyId": keyIDSchema("")},
			body:        jsonBody("Optional grace period.", ref("InvalidateKeyRequest"), false),
			ok:          okEmpty("Invalidated; no body."),
			errs:        []errDoc{e(400, "BAD_REQUEST: invalid keyId or grace period."), eTrusted404},
			mock501:     true,
		},
		"reactivateTrustedKey": {
			pathSchemas: map[string]*Schema{"keyId": keyIDSchema("")},
			body:        jsonBody("The new validity.", ref("ReactivateKeyRequest"), true),
			ok:          okJSON("The key.", ref("TrustedKey")),
			errs:        []errDoc{e(400, "BAD_REQUEST: invalid keyId or validity."), eTrusted404},
			mock501:     true,
		},

		// IAM: OIDC providers.
		"listOidcProviders": {
			params:  []*Parameter{query("activeOnly", "Only providers whose tokens are accepted.", &Schema{Type: SchemaType{"boolean"}, Default: false})},
			ok:      okJSON("The tenant's providers.", arr(ref("OidcProvider"), "")),
			mock501: true,
		},
		"registerOidcProvider": {
			desc: "Tokens of the provider are accepted once its keys have been fetched. The tenant id must be a UUID. " +
				"Several tenants may register the same provider: a token then goes to the registration whose expectedAudiences contains its audience (401 when none or several do).",
			body:    jsonBody("The provider.", ref("RegisterOidcProviderRequest"), true),
			ok:      okJSON("The registration.", ref("OidcProvider")),
			errs:    []errDoc{e(400, "BAD_REQUEST, OIDC_SSRF_BLOCKED or OIDC_INVALID_TENANT."), e(409, "OIDC_PROVIDER_DUPLICATE: this tenant already registered the URI.")},
			mock501: true,
		},
		"reloadOidcProviders": {
			desc:    "Re-fetches every provider's metadata and keys now; a provider whose fetch fails keeps its old keys.",
			ok:      okEmpty("Reloaded; no body."),
			mock501: true,
		},
		"deleteOidcProvider": {
			ok:      okEmpty("Deleted; no body."),
			errs:    []errDoc{eBadParam, eOidc404},
			mock501: true,
		},
		"updateOidcProvider": {
			body:    jsonBody("The changes.", ref("UpdateOidcProviderRequest"), true),
			ok:      okJSON("The registration.", ref("OidcProvider")),
			errs:    []errDoc{e(400, "BAD_REQUEST."), eOidc404, e(409, "OIDC_PROVIDER_INACTIVE.")},
			mock501: true,
		},
		"invalidateOidcProvider": {
			desc:    "Reversible with reactivate.",
			ok:      okEmpty("Invalidated; no body."),
			errs:    []errDoc{eBadParam, eOidc404},
			mock501: true,
		},
		"reactivateOidcProvider": {
			body:    jsonBody("Optional.", ref("ReactivateOidcProviderRequest"), false),
			ok:      okJSON("The registration.", ref("OidcProvider")),
			errs:    []errDoc{e(400, "BAD_REQUEST."), eOidc404},
			mock501: true,
		},

		// Stream data.
		"getStreamDataConfig": {
			params: []*Parameter{queryReq("configId", "", uuidS(""))},
			ok:     okJSON("The configuration.", ref("StreamDataConfig")),
			errs:   []errDoc{e(404, "Not found.")},
		},
		"updateStreamDataConfig": {
			body: jsonBody("The configuration.", ref("StreamDataConfig"), true),
			ok:   okEmpty("Updated; no body."),
			errs: []errDoc{e(404, "Not found.")},
		},
		"saveStreamDataConfig": {
			body: jsonBody("The configuration.", ref("StreamDataConfig"), true),
			ok:   okJSON("Its id.", uuidS("")),
		},
		"deleteStreamDataConfig": {
			params: []*Parameter{queryReq("configId", "", uuidS(""))},
			ok:     okEmpty("Deleted; no body."),
			errs:   []errDoc{e(404, "Not found.")},
		},
		"getAllConfigs": {
			ok: okJSON("The configurations.", arr(ref("StreamDataConfig"), "")),
		},
		"delete": {
			body: jsonBody("What to delete.", ref("StreamDataRequest"), true),
			ok:   okJSON("Counts.", ref("DeleteCounts")),
		},
		"exportAll_1": {
			ok: okJSON("Every configuration.", ref("StreamDataConfigs")),
		},
		"exportAll": {
			params: []*Parameter{queryReq("entityClass", "Model as `<name>.<version>`.", &Schema{Type: SchemaType{"string"}})},
			ok:     okJSON("The configurations of that model.", ref("StreamDataConfigs")),
		},
		"exportByIds": {
			params: []*Parameter{arrayQuery("includeIds", "Configuration ids (repeat the key).", uuidS(""), true)},
			ok:     okJSON("The configurations.", ref("StreamDataConfigs")),
		},
		"getStreamData": {
			desc: "Streams one page (chunked): rows go out as the engine reads them. A failure after rows went out ends the object " +
				"with an `error` member instead of `lastRowIndexPosition`.",
			body: streamDataGetBody(),
			ok:   okJSON("Rows.", ref("StreamDataRows")),
		},
		"importContainer": {
			params: []*Parameter{query("failOnExists", "Fail when a configuration already exists.", &Schema{Type: SchemaType{"boolean"}, Default: false})},
			body:   jsonBody("The configurations.", ref("StreamDataConfigs"), true),
			ok:     okEmpty("Imported; no body."),
			errs:   []errDoc{e(409, "A configuration exists and failOnExists is set.")},
		},
		"getIndexs": {
			params: []*Parameter{queryReq("entityClass", "Model as `<name>.<version>`.", &Schema{Type: SchemaType{"string"}})},
			ok:     okJSON("Indexes.", arr(ref("StreamDataIndex"), "")),
		},
		"getQueryPlan": {
			desc: "Beyond `original` and `optimized`, svc adds (extension) `servedBy`, the index the plan reads, and `suggestedIndexes`, " +
				"the composite index that would serve the condition (with its `ddl` on PostgreSQL); on PostgreSQL also `pgExplain` " +
				"(EXPLAIN (FORMAT JSON) of the page's SQL), `pgSql` and `indexesUsed`; on memory `explainNote` (no EXPLAIN there).",
			body: jsonBody("The query.", ref("QueryPlanRequest"), true),
			ok:   okJSON("The plan.", ref("QueryPlan")),
		},

		// Search.
		"submitAsyncSearchJob": {
			desc:   "Starts a search in the background and returns its job id at once; poll the status, then page through the results.",
			params: []*Parameter{query("pointInTime", "Search as at this instant; default the time of submission."+instantRangeDoc, dateTime("")), pSort},
			body:   conditionBody,
			ok:     okJSON("The job id.", uuidS("")),
			errs:   []errDoc{eSearch400, eModel404, e(503, "SEARCH_QUEUE_FULL (retryable): too many searches queued.")},
		},
		"getAsyncSearchResults": {
			desc: "Only for a SUCCESSFUL job. Entities read as at the job's point in time; vanished ones are skipped.",
			params: []*Parameter{
				query("pageSize", "Results per page; 0 or less means 1000.", intRange("int32", 0, 10000, 1000)),
				query("pageNumber", "Zero-based page.", intRange("int32", 0, 214748, 0)),
			},
			ok:   okJSON("A page of results.", ref("PagedEntityResults")),
			errs: []errDoc{e(400, "BAD_REQUEST: bad paging, or the job has not succeeded."), eJob404},
		},
		"cancelAsyncSearch": {
			ok:   okJSON("Cancelled.", ref("AsyncSearchCancelled")),
			errs: []errDoc{eBadParam, e(400, "SEARCH_JOB_ALREADY_TERMINAL: the job is not running."), eJob404},
		},
		"getAsyncSearchStatus": {
			ok:   okJSON("The job's state.", ref("AsyncSearchStatus")),
			errs: []errDoc{eBadParam, eJob404},
		},
		"searchEntities": {
			desc: "Streams every match as NDJSON, or fails: more matches than `limit` answer 400 SEARCH_RESULT_LIMIT, never a truncated result.",
			params: []*Parameter{
				pPointInTime,
				query("limit", "Most matches allowed.", intRange("int32", 1, 10000, 1000)),
				pSort,
				query("trackingRead", "Inside a joined transaction (X-Tx-Token), add the returned entities to its read set.", &Schema{Type: SchemaType{"boolean"}, Default: false}),
			},
			body: conditionBody,
			ok: &Response{
				Description: "One entity per line (application/x-ndjson); empty when nothing matches.",
				Content:     content("application/x-ndjson", ref("EntityEnvelope")),
			},
			errs: []errDoc{e(400, "BAD_REQUEST, INVALID_CONDITION, INVALID_FIELD_PATH, CONDITION_TYPE_MISMATCH, FUNCTION_CONDITION_FAILED, SEARCH_RESULT_LIMIT or SCAN_BUDGET_EXHAUSTED."), eModel404, eFunction503},
		},

		// SQL schema.
		"getSchemaByName": {
			params: []*Parameter{queryReq("schemaName", "", withDesc(&Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(1024)}, ""))},
			ok:     okJSON("The schema.", ref("SqlSchema")),
			errs:   []errDoc{e(404, "Not found.")},
		},
		"saveSchema": {
			desc: "Upsert by schemaName (the body's id is ignored). On PostgreSQL the schema's views are rebuilt in its own database (made on the first save) before the answer; a failed save leaves the previous views answering; see `svc help sql`.",
			body: jsonBody("The schema.", ref("SqlSchema"), true),
			ok:   okJSON("Its id (a time-based UUID).", uuidS("")),
			errs: []errDoc{e(400, "BAD_REQUEST: name length, missing tables, illegal or duplicate names, unknown paths, keys or data types."), eModel404,
				e(409, "SQL_SCHEMA_LIMIT_REACHED (extension): a new name while the tenant has SVC_SQL_MAX_SCHEMAS_PER_TENANT schemas."),
				e(503, "SQL_ROLE_RIGHTS_NOT_REVOKED (extension): on PostgreSQL, svc's database still grants PUBLIC rights a schema role must not hold; properties.left and properties.migrations say what an operator applies as a superuser. SQL_DATABASE_UNAVAILABLE (extension): svc cannot create the schema's own PostgreSQL database or postgres_fdw in it; properties.need names what svc's role lacks.")},
		},
		"deleteSchemaByName": {
			params: []*Parameter{queryReq("schemaName", "", withDesc(&Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(1024)}, ""))},
			ok:     okJSON("Deleted.", &Schema{Type: SchemaType{"string"}}),
			errs:   []errDoc{e(404, "Not found."), e(409, "SQL_SCHEMA_IN_USE (extension): the schema's PostgreSQL role owns objects or has sessions svc could not end; properties.reason says which.")},
		},
		"genTables": {
			ok:   okJSON("Tables generated from the model.", arr(ref("SqlTable"), "")),
			errs: []errDoc{eModel404},
		},
		"getSchemas": {
			ok: okJSON("All schemas.", arr(ref("SqlSchema"), "")),
		},
		"putSchema": {
			ok: okJSON("The schema.", ref("SqlSchema")),
			errs: []errDoc{e(400, "BAD_REQUEST."), e(422, "SQL_NAME_CLASH."), e(409, "SQL_SCHEMA_LIMIT_REACHED (extension): a new name while the tenant has SVC_SQL_MAX_SCHEMAS_PER_TENANT schemas."),
				e(503, "SQL_ROLE_RIGHTS_NOT_REVOKED (extension): on PostgreSQL, svc's database still grants PUBLIC rights a schema role must not hold; properties.left and properties.migrations say what an operator applies as a superuser. SQL_DATABASE_UNAVAILABLE (extension): svc cannot create the schema's own PostgreSQL database or postgres_fdw in it; properties.need names what svc's role lacks.")},
		},
		"updateTables": {
			body: jsonBody("The tables.", arr(ref("SqlTable"), ""), true),
			ok:   okJSON("The tables merged with the model's current shape (nothing is saved).", arr(ref("SqlTable"), "")),
			errs: []errDoc{eModel404},
		},
		"getSchema": {
			ok:   okJSON("The schema.", ref("SqlSchema")),
			errs: []errDoc{e(400, "BAD_REQUEST: not a time-based (v1) UUID."), e(404, "Not found.")},
		},
		"deleteSchema": {
			ok:   okJSON("Deleted.", &Schema{Type: SchemaType{"string"}}),
			errs: []errDoc{e(400, "BAD_REQUEST: not a time-based (v1) UUID."), e(404, "Not found."), e(409, "SQL_SCHEMA_IN_USE (extension): the schema's PostgreSQL role owns objects or has sessions svc could not end; properties.reason says which.")},
		},

		// Token endpoint: OAuth bodies, handled specially in tokenOperation.
		"getTechnicalUserToken": {
			desc: "OAuth 2.0 token endpoint. Authenticate the client with HTTP Basic (`client_id:client_secret`, client_secret_basic) " +
				"or with `client_id` and `client_secret` form fields (client_secret_post), never both. " +
				"`client_credentials` issues a token for the client itself; token exchange (RFC 8693) issues an on-behalf-of token " +
				"for the subject token's user, in the same tenant only. Responses carry Cache-Control: no-store.",
		},
	}
	for _, area := range extensionDocs() {
		for id, d := range area {
			docs[id] = d
		}
	}
	return docs
}

// pathParamDocs are the default descriptions and schemas of path
// parameters, by name.
func pathParamDocs() map[string]pathParamDoc {
	return map[string]pathParamDoc{
		"entityId":       {"Entity id.", uuidS("")},
		"entityName":     {"Entity model name.", &Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(1024)}},
		"modelVersion":   {"Entity model version.", &Schema{Type: SchemaType{"integer"}, Format: "int32"}},
		"format":         {"Body format.", enum("", "JSON", "XML")},
		"transition":     {"Workflow transition to fire.", &Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(1024)}},
		"transactionId":  {"Transaction id returned by a write.", uuidS("")},
		"jobId":          {"Asynchronous search job id.", uuidS("")},
		"messageId":      {"Message id.", uuidS("")},
		"subject":        {"Message subject.", &Schema{Type: SchemaType{"string"}, Pattern: `^[a-zA-Z0-9._-]{1,256}$`}},
		"converter":      {"Model converter.", enum("", "SAMPLE_DATA", "SIMPLE_VIEW", "JSON_SCHEMA")},
		"dataFormat":     {"Body format.", enum("", "JSON", "XML")},
		"changeLevel":    {"Change level.", enum("", "ARRAY_LENGTH", "ARRAY_ELEMENTS", "TYPE", "STRUCTURAL")},
		"clientId":       {"Machine client id.", &Schema{Type: SchemaType{"string"}, Pattern: `^[A-Za-z0-9]{1,100}$`}},
		"keyId":          {"Key id (JWT `kid`).", &Schema{Type: SchemaType{"string"}, MinLength: ptr(1)}},
		"id":             {"OIDC provider registration id.", uuidS("")},
		"entityModelId":  {"Model id.", uuidS("")},
		"schemaName":     {"SQL schema name.", &Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(1024)}},
		"schemaId":       {"SQL schema id.", uuidS("")},
		"subscriptionId": {"Change-feed subscription id.", &Schema{Type: SchemaType{"string"}, MinLength: ptr(1)}},
	}
}

type pathParamDoc struct {
	desc   string
	schema *Schema
}

// streamDataGetExample is a complete first-page request: the orders of
// model order/1 created since the start of 2026, oldest first, two
// columns (issue 26: stream data had no example anywhere). pointTime is
// left out: the first page reads at now.
const streamDataGetExample = `{"sdDef":{"requestClass":"order.1",` +
	`"rangeCondition":{"@bean":"com.cyoda.core.conditions.queryable.GreaterThanEquals","fieldName":"creationDate",` +
	`"value":{"@type":"java.util.Date","value":"2026-01-01T00:00:00.000+00:00"}},` +
	`"rangeOrder":"ASC","columns":[{"name":"id"},{"name":"$.customer"},{"name":"$.total"}]},` +
	`"offset":0,"length":100}`

func streamDataGetBody() *RequestBody {
	b := jsonBody("What to read; send `pointTime: null` on the first page and the answer's `pointTime` with `offset` on the next.",
		ref("StreamDataRequest"), true)
	var ex any
	if err := json.Unmarshal([]byte(streamDataGetExample), &ex); err == nil {
		b.Content["application/json"].Example = ex
	}
	return b
}
