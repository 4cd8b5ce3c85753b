package fast

import "svc/streamdata"

// Schema helpers keep the component table below readable; they build the
// typed model (openapi_model.go) once, when the document is rendered at
// startup.

func ref(name string) *Schema { return &Schema{Ref: "#/components/schemas/" + name} }

// refD is a reference with its own description; JSON Schema 2020-12 (and so
// OpenAPI 3.1) allows siblings next to $ref.
func refD(name, desc string) *Schema {
	return &Schema{Ref: "#/components/schemas/" + name, Description: desc}
}

func str(desc string) *Schema { return withDesc(&Schema{Type: SchemaType{"string"}}, desc) }

func strF(format, desc string) *Schema {
	return withDesc(&Schema{Type: SchemaType{"string"}, Format: format}, desc)
}

func uuidS(desc string) *Schema { return strF("uuid", desc) }

func dateTime(desc string) *Schema { return strF("date-time", desc) }

func integer(format, desc string) *Schema {
	return withDesc(&Schema{Type: SchemaType{"integer"}, Format: format}, desc)
}

func boolean(desc string) *Schema { return withDesc(&Schema{Type: SchemaType{"boolean"}}, desc) }

func number(desc string) *Schema { return withDesc(&Schema{Type: SchemaType{"number"}}, desc) }

func enum(desc string, vals ...string) *Schema {
	return withDesc(&Schema{Type: SchemaType{"string"}, Enum: vals}, desc)
}

func arr(items *Schema, desc string) *Schema {
	return withDesc(&Schema{Type: SchemaType{"array"}, Items: items}, desc)
}

// anyJSON is a value of any JSON type.
func anyJSON(desc string) *Schema { return withDesc(&Schema{}, desc) }

// freeObj is an object whose members are not described further.
func freeObj(desc string) *Schema {
	return withDesc(&Schema{Type: SchemaType{"object"}, AdditionalProperties: &Additional{Allowed: true}}, desc)
}

// stringMap is an object of string members.
func stringMap(desc string) *Schema {
	return withDesc(&Schema{Type: SchemaType{"object"}, AdditionalProperties: &Additional{Schema: &Schema{Type: SchemaType{"string"}}}}, desc)
}

// obj is an open object: clients must ignore members they do not know.
func obj(desc string, props Props, required ...string) *Schema {
	m := &Schema{Type: SchemaType{"object"}, Properties: props}
	if len(required) > 0 {
		m.Required = required
	}
	return withDesc(m, desc)
}

// closedObj is an object svc rejects unknown members in.
func closedObj(desc string, props Props, required ...string) *Schema {
	m := obj(desc, props, required...)
	m.AdditionalProperties = &Additional{}
	return m
}

func nullable(m *Schema) *Schema {
	if len(m.Type) == 1 {
		m.Type = SchemaType{m.Type[0], "null"}
	}
	return m
}

func withDesc(m *Schema, desc string) *Schema {
	if desc != "" {
		m.Description = desc
	}
	return m
}

// conditionOperators are the operators the condition language accepts
// (NOT_EQUALS, GREATER_THAN_OR_EQUAL, LESS_THAN_OR_EQUAL, IN and NOT_IN are
// the spellings client templates send).
var conditionOperators = []string{
	"EQUALS", "NOT_EQUAL", "NOT_EQUALS", "GREATER_THAN", "LESS_THAN", "GREATER_OR_EQUAL", "LESS_OR_EQUAL",
	"GREATER_THAN_OR_EQUAL", "LESS_THAN_OR_EQUAL", "IN", "NOT_IN",
	"CONTAINS", "NOT_CONTAINS", "STARTS_WITH", "NOT_STARTS_WITH", "ENDS_WITH", "NOT_ENDS_WITH",
	"LIKE", "IS_NULL", "NOT_NULL", "BETWEEN", "BETWEEN_INCLUSIVE", "MATCHES_PATTERN",
	"IEQUALS", "INOT_EQUAL", "ICONTAINS", "INOT_CONTAINS", "ISTARTS_WITH", "INOT_STARTS_WITH",
	"IENDS_WITH", "INOT_ENDS_WITH",
}

// SIMPLE_VIEW patterns (docs/decisions/0011-simple-view-export-import.md), anchored so that each alternative covers
// the whole key.
const (
	simpleViewPathPattern = `^\$(\.\w[-\w.]*(\[\*\])*)*$`
	simpleViewKeyPattern  = `^(\.\w[-\w.]*(\[\*\])*|#\.?[-\w.]*)$`
	// A DataType or structural name, a polymorphic set "[A, B]", or a
	// UniTypeArray "(T x n)" whose T may itself be a set.
	simpleViewTypePattern = `^([A-Z_]+|\[[A-Z_]+(, [A-Z_]+)*\]|\(([A-Z_]+|\[[A-Z_]+(, [A-Z_]+)*\]) x \d+\))$`
)

func componentSchemas() map[string]*Schema {
	modelKey := ref("ModelKey")
	return map[string]*Schema{
		"ProblemDetail": problemSchema(),

		// Entities.
		"ModelKey": obj("Identifies an entity model.", Props{
			"name":    str("Entity model name."),
			"version": integer("int32", "Entity model version."),
		}, "name", "version"),
		"EntityMetadata": obj("Metadata svc keeps for every entity.", Props{
			"id":                      uuidS("Entity id."),
			"modelKey":                modelKey,
			"state":                   str("Current workflow state (CREATED under the default workflow)."),
			"creationDate":            dateTime("When the entity was created."),
			"lastUpdateTime":          dateTime("When the entity was last written; equals creationDate if never updated."),
			"transactionId":           str("Transaction that wrote this version (a UUID; may be empty)."),
			"transitionForLatestSave": str("Transition of the latest save: `loopback` for saves without a named transition."),
			"pointInTime":             dateTime("The as-at instant of a listing made with `pointInTime`."),
		}, "id", "state", "creationDate", "lastUpdateTime"),
		"EntityEnvelope": obj("One entity as stored, with its metadata.", Props{
			"type": enum("Always ENTITY.", "ENTITY"),
			"data": freeObj("The entity's data exactly as stored (numbers are kept losslessly)."),
			"meta": ref("EntityMetadata"),
		}, "type", "data", "meta"),
		"EntityTransactionResponse": obj("Result of one write transaction (one chunk of a collection write).", Props{
			"transactionId": uuidS("Transaction of the write; use it with the audit finished-event lookup. Absent on a failed chunk."),
			"entityIds":     arr(uuidS(""), "Entities written by this transaction; never null, empty when nothing was written."),
			"error": obj("Present only on the failed chunk that ended a collection write; later chunks were not attempted.", Props{
				"code":       str("Error code."),
				"message":    str("What went wrong."),
				"chunkIndex": integer("int32", "Zero-based index of the failed chunk."),
			}),
			"failed": arr(obj("An item whose `ifMatch` precondition failed; the rest of the chunk committed.", Props{
				"entityId": uuidS("The item's entity."),
				"error": obj("", Props{
					"code":      enum("", "ENTITY_MODIFIED"),
					"message":   str(""),
					"itemIndex": integer("int32", "Index of the item within its chunk."),
				}),
			}), "Per-item precondition failures of a collection update."),
		}, "entityIds"),
		"CollectionCreateItem": obj("One entity of a mixed-model collection create.", Props{
			"model":   modelKey,
			"payload": str("The entity as a JSON-encoded string (not an object)."),
		}, "model", "payload"),
		"CollectionUpdateItem": obj("One entity of a collection update.", Props{
			"id":         uuidS("Entity to update."),
			"payload":    str("The full replacement entity as a JSON-encoded string."),
			"transition": str("Transition to fire; empty or absent runs the loopback."),
			"ifMatch":    str("Expected current transactionId; a mismatch lands the item in `failed`."),
		}, "id", "payload"),
		"SingleDeleteResult": obj("A deleted entity.", Props{
			"id":            uuidS("Entity id."),
			"modelKey":      modelKey,
			"transactionId": uuidS("Transaction of the delete."),
		}, "id", "modelKey", "transactionId"),
		"DeleteCounts": obj("Counts of a bulk delete. The field names are spelled as the wire contract has them.", Props{
			"numberOfEntitites":        integer("int64", "Entities matched."),
			"numberOfEntititesRemoved": integer("int64", "Entities removed."),
			"idToError":                stringMap("Entities that could not be removed, by id."),
		}),
		"EntityDeleteResult": obj("Result of deleting the entities of a model.", Props{
			"entityModelClassId": uuidS("Model id (UUIDv5 of `<name>.<version>`)."),
			"deleteResult":       ref("DeleteCounts"),
			"ids":                arr(uuidS(""), "Removed entities; only with `verbose=true`."),
		}, "entityModelClassId", "deleteResult"),
		"EntityChange": obj("One version in an entity's history.", Props{
			"changeType":     enum("", "CREATE", "UPDATE", "DELETE"),
			"timeOfChange":   dateTime(""),
			"user":           str("Principal the change is attributed to."),
			"transactionId":  uuidS("Present when the version carries an entity snapshot."),
			"attributedKind": enum("Kind of the attributed principal.", "user", "service", "system"),
			"executedBy": obj("Principal that executed the change.", Props{
				"id":   str(""),
				"kind": enum("", "user", "service", "system"),
			}),
		}, "changeType", "timeOfChange", "user"),
		"ModelStats": obj("Entity count of one model.", Props{
			"modelName":    str(""),
			"modelVersion": integer("int32", ""),
			"count":        integer("int64", ""),
		}, "modelName", "modelVersion", "count"),
		"ModelStateStats": obj("Entity count of one model in one state.", Props{
			"modelName":    str(""),
			"modelVersion": integer("int32", ""),
			"state":        str(""),
			"count":        integer("int64", ""),
		}, "modelName", "modelVersion", "state", "count"),
		"GroupedStatsRequest": closedObj("A grouped statistics query; unknown members are rejected.", Props{
			"groupBy": withDesc(&Schema{Type: SchemaType{"array"}, MinItems: ptr(1), Items: &Schema{Type: SchemaType{"string"}}},
				"`state` or `$.`-paths of scalar fields to group by."),
			"condition": refD("Condition", "Only entities matching this condition are counted."),
			"aggregations": arr(closedObj("", Props{
				"op":    enum("", "sum", "avg", "min", "max", "stdev"),
				"field": str("`$.`-path of a numeric field."),
				"as":    str("Result alias; defaults to `<op>_<field without $.>`."),
			}, "op", "field"), "Aggregations computed per group."),
			"pointInTime": dateTime("Count as at this instant (RFC 3339)." + instantRangeDoc),
			"limit":       withDesc(&Schema{Type: SchemaType{"integer"}, Minimum: ptr[int64](1)}, "Maximum number of groups returned."),
		}, "groupBy"),
		"GroupedStatsBucket": obj("One group of a grouped statistics query.", Props{
			"groupKey": arr(obj("", Props{
				"path":  str("The groupBy entry."),
				"value": anyJSON("The group's value of that path (a scalar or null)."),
			}, "path", "value"), ""),
			"count": integer("int64", ""),
			"aggregations": withDesc(&Schema{Type: SchemaType{"object"}, AdditionalProperties: &Additional{Schema: &Schema{Type: SchemaType{"number", "null"}}}},
				"Aggregation results by alias; null for an empty group."),
		}, "groupKey", "count"),

		// Conditions.
		"Condition": &Schema{
			Description: "A search condition; `type` selects the kind.",
			OneOf: []*Schema{ref("SimpleCondition"), ref("LifecycleCondition"), ref("GroupCondition"),
				ref("ArrayCondition"), ref("FunctionCondition")},
			Discriminator: &Discriminator{PropertyName: "type", Mapping: map[string]string{
				"simple":    "#/components/schemas/SimpleCondition",
				"lifecycle": "#/components/schemas/LifecycleCondition",
				"group":     "#/components/schemas/GroupCondition",
				"array":     "#/components/schemas/ArrayCondition",
				"function":  "#/components/schemas/FunctionCondition",
			}},
		},
		"SimpleCondition": obj("Compares the value at a data path (`operator` and `operation` are accepted as aliases of `operatorType`).", Props{
			"type":         enum("", "simple"),
			"jsonPath":     str("Data path starting with `$`; `[*]` matches any array element."),
			"operatorType": enum("", conditionOperators...),
			"value":        anyJSON("Operand: a scalar, an array (two elements for BETWEEN; any number for IN and NOT_IN) or null; never an object."),
		}, "type", "jsonPath", "operatorType"),
		"LifecycleCondition": obj("Compares an entity metadata field.", Props{
			"type":         enum("", "lifecycle"),
			"field":        enum("`current_state` is an alias of `state`.", "state", "current_state", "creationDate", "lastUpdateTime", "transitionForLatestSave", "previousTransition", "transactionId", "id"),
			"operatorType": enum("", conditionOperators...),
			"value":        anyJSON("Operand; temporal fields need a date-time for comparisons."),
		}, "type", "field", "operatorType"),
		"GroupCondition": obj("Combines conditions. An empty AND matches everything; an empty OR matches nothing.", Props{
			"type":       enum("", "group"),
			"operator":   enum("", "AND", "OR", "NOT"),
			"conditions": arr(ref("Condition"), "Nested conditions (depth at most 50)."),
		}, "type", "operator", "conditions"),
		"ArrayCondition": obj("Matches an array positionally.", Props{
			"type":     enum("", "array"),
			"jsonPath": str("Path of the array."),
			"values":   arr(anyJSON(""), "Expected element per position; null matches anything."),
		}, "type", "jsonPath", "values"),
		"FunctionCondition": obj("Evaluated by a compute member; never pushed down to storage.", Props{
			"type": enum("", "function"),
			"function": obj("", Props{
				"name":      str("Function name."),
				"config":    ref("ComputeConfig"),
				"criterion": ref("Condition"),
			}, "name"),
		}, "type", "function"),
		"ComputeConfig": obj("How a call is dispatched to a compute member.", Props{
			"calculationNodesTags": str("Tags selecting compute members."),
			"attachEntity":         boolean("Send the entity with the call (default true)."),
			"responseTimeoutMs":    integer("int64", ""),
			"retryPolicy":          str("NONE or FIXED (aliases EXPONENTIAL, LINEAR, EXPONENTIAL_BACKOFF, LINEAR_BACKOFF)."),
			"context":              str("Opaque context passed to the member."),
		}),

		// Models.
		"EntityModel": obj("A registered entity model.", Props{
			"id":              uuidS("Model id (UUIDv5 of `<name>.<version>`)."),
			"modelName":       str(""),
			"modelVersion":    integer("int32", ""),
			"currentState":    enum("", "LOCKED", "UNLOCKED"),
			"modelUpdateDate": dateTime(""),
		}, "id", "modelName", "modelVersion", "currentState"),
		"ModelActionResult": obj("Outcome of a model operation.", Props{
			"success":  boolean(""),
			"message":  str(""),
			"modelId":  uuidS(""),
			"modelKey": modelKey,
		}, "success", "message"),
		"ModelExport": &Schema{
			Description: "A model export: SIMPLE_VIEW or JSON_SCHEMA, by the converter asked for.",
			OneOf:       []*Schema{ref("SimpleViewExport"), ref("JsonSchemaExport")},
		},
		"SimpleViewExport": closedObj("SIMPLE_VIEW export: exactly `currentState` and `model`. It imports back unchanged.", Props{
			"currentState": enum("", "LOCKED", "UNLOCKED"),
			"model": withDesc(&Schema{
				Type:                 SchemaType{"object"},
				PropertyNames:        &Schema{Pattern: simpleViewPathPattern},
				AdditionalProperties: &Additional{Schema: ref("SimpleViewNode")},
				Required:             []string{"$"},
			}, "Node descriptors by node path (`$`, `$.field[*]`, ...), sorted; always holds the root `$`."),
		}, "currentState", "model"),
		"JsonSchemaExport": closedObj("JSON_SCHEMA export.", Props{
			"currentState": enum("", "LOCKED", "UNLOCKED"),
			"model":        freeObj("A JSON Schema document describing the model."),
		}, "currentState", "model"),
		"SimpleViewNode": &Schema{
			Description: "Object node, detached array node, or mixed node.",
			OneOf: []*Schema{
				ref("SimpleViewObjectNode"),
				ref("SimpleViewType"),
				ref("SimpleViewMultiTypeArray"),
				withDesc(&Schema{
					Type:        SchemaType{"array"},
					PrefixItems: []*Schema{ref("SimpleViewObjectNode"), {OneOf: []*Schema{ref("SimpleViewType"), ref("SimpleViewMultiTypeArray")}}},
					MinItems:    ptr(2),
					MaxItems:    ptr(2),
				}, "Mixed node: the path was seen both as an object and as an array."),
			},
		},
		"SimpleViewObjectNode": withDesc(&Schema{
			Type:                 SchemaType{"object"},
			PropertyNames:        &Schema{Pattern: simpleViewKeyPattern},
			AdditionalProperties: &Additional{Schema: &Schema{OneOf: []*Schema{ref("SimpleViewType"), ref("SimpleViewMultiTypeArray")}}},
		}, "Data keys (`.field`, `.a.b`, `.list[*]`) map to type descriptors; structural keys (`#`, `#.field`) to ARRAY_ELEMENT or OBJECT. Data keys sort first, then structural keys."),
		"SimpleViewType": withDesc(&Schema{Type: SchemaType{"string"}, Pattern: simpleViewTypePattern},
			"A DataType (STRING, BYTE, SHORT, INTEGER, LONG, BIG_INTEGER, UNBOUND_INTEGER, FLOAT, DOUBLE, BIG_DECIMAL, UNBOUND_DECIMAL, BOOLEAN, CHARACTER, LOCAL_DATE, LOCAL_DATE_TIME, LOCAL_TIME, ZONED_DATE_TIME, YEAR, YEAR_MONTH, UUID_TYPE, TIME_UUID_TYPE, BYTE_ARRAY, NULL), a polymorphic set `[INTEGER, STRING]`, a homogeneous array `(BYTE x 3)`, or a structural value (OBJECT, ARRAY, ARRAY_ELEMENT)."),
		"SimpleViewMultiTypeArray": withDesc(&Schema{Type: SchemaType{"array"}, MinItems: ptr(1), Items: ref("SimpleViewType")},
			"Heterogeneous array: one type per index position."),
		"SetUniqueKeysRequest": obj("Replaces the model's whole set of unique keys; an empty list clears them.", Props{
			"uniqueKeys": arr(obj("", Props{
				"id":     str("Key name, unique within the model."),
				"fields": withDesc(&Schema{Type: SchemaType{"array"}, MinItems: ptr(1), Items: &Schema{Type: SchemaType{"string"}}}, "Ordered scalar leaf paths (`$.a`)."),
			}, "id", "fields"), ""),
		}, "uniqueKeys"),
		"WorkflowImportRequest": closedObj("Workflows to import; unknown members at any depth are rejected.", Props{
			"workflows":   arr(ref("Workflow"), ""),
			"importMode":  enum("MERGE (default) upserts by name; REPLACE stores exactly these; ACTIVATE stores these and deactivates the others.", "MERGE", "REPLACE", "ACTIVATE"),
			"allowCycles": boolean("Allow unguarded automated cycles (default false)."),
		}, "workflows"),
		"WorkflowImportResult": obj("", Props{"success": boolean("")}, "success"),
		"WorkflowExport": obj("A model's imported workflows.", Props{
			"entityName":   str(""),
			"modelVersion": integer("int32", ""),
			"workflows":    arr(ref("Workflow"), ""),
		}, "entityName", "modelVersion", "workflows"),
		"Workflow": obj("A workflow definition.", Props{
			"version":      str("Schema version `MAJOR.MINOR` (1.0 to 1.5 accepted; exports say 1.3)."),
			"name":         withDesc(&Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(256)}, ""),
			"desc":         str(""),
			"initialState": str(""),
			"active":       boolean("Default true."),
			"criterion":    refD("Condition", "Entities this workflow applies to."),
			"states": withDesc(&Schema{Type: SchemaType{"object"}, AdditionalProperties: &Additional{Schema: obj("", Props{
				"transitions": arr(ref("WorkflowTransition"), ""),
				"annotations": freeObj(""),
			})}}, "States by name."),
			"criterionAnnotations": freeObj(""),
			"annotations":          freeObj("Free-form, at most 64 KB."),
		}, "version", "name", "initialState", "states"),
		"WorkflowTransition": obj("", Props{
			"name":       str(""),
			"next":       str("Target state."),
			"manual":     boolean(""),
			"disabled":   boolean(""),
			"criterion":  ref("Condition"),
			"processors": arr(ref("WorkflowProcessor"), ""),
			"schedule": obj("Fires the transition later by itself.", Props{
				"delayMs":   withDesc(&Schema{Type: SchemaType{"integer"}, Minimum: ptr[int64](1)}, ""),
				"timeoutMs": withDesc(&Schema{Type: SchemaType{"integer"}, Minimum: ptr[int64](0)}, ""),
				"function":  freeObj("Compute function that decides the schedule."),
			}),
			"annotations": freeObj(""),
		}, "name", "next", "manual"),
		"WorkflowProcessor": obj("", Props{
			"type":                 enum("", "externalized"),
			"name":                 str(""),
			"executionMode":        enum("", "SYNC", "ASYNC_SAME_TX", "ASYNC_NEW_TX", "COMMIT_BEFORE_DISPATCH"),
			"startNewTxOnDispatch": boolean(""),
			"config":               ref("ComputeConfig"),
			"annotations":          freeObj(""),
		}, "name"),

		// Search.
		"PagedEntityResults": obj("A page of asynchronous search results.", Props{
			"content": arr(ref("EntityEnvelope"), ""),
			"page": obj("", Props{
				"number":        integer("int32", ""),
				"size":          integer("int32", "Effective page size."),
				"totalElements": integer("int64", "Entities the job matched."),
				"totalPages":    integer("int32", ""),
			}, "number", "size", "totalElements", "totalPages"),
		}, "content", "page"),
		"AsyncSearchStatus": obj("State of an asynchronous search.", Props{
			"searchJobStatus":       enum("", "RUNNING", "SUCCESSFUL", "FAILED", "CANCELLED", "NOT_FOUND"),
			"createTime":            dateTime(""),
			"finishTime":            dateTime("Absent while RUNNING."),
			"expirationDate":        dateTime(""),
			"entitiesCount":         integer("int64", ""),
			"calculationTimeMillis": integer("int64", ""),
		}, "searchJobStatus", "createTime"),
		"AsyncSearchCancelled": obj("", Props{
			"isCancelled":            boolean(""),
			"cancelled":              boolean(""),
			"currentSearchJobStatus": enum("", "CANCELLED"),
		}),

		// Audit.
		"AuditEventsPage": obj("Audit events, newest first.", Props{
			"items": arr(ref("AuditEvent"), ""),
			"pagination": obj("", Props{
				"hasNext":    boolean(""),
				"nextCursor": str("Pass as `cursor` to get the next page; present only when hasNext."),
			}, "hasNext"),
		}, "items", "pagination"),
		"AuditEvent": obj("An audit event. EntityChange events carry changeType and actor; StateMachine events carry eventType, state and data.", Props{
			"auditEventType": enum("", "EntityChange", "StateMachine", "System"),
			"severity":       enum("", "ERROR", "WARN", "INFO", "DEBUG"),
			"utcTime":        dateTime(""),
			"microsTime":     integer("int64", "Microseconds since the epoch."),
			"entityId":       uuidS(""),
			"transactionId":  uuidS(""),
			"details":        str(""),
			"system":         boolean(""),
			"actor": obj("", Props{
				"id":      str(""),
				"name":    str(""),
				"legalId": str(""),
			}),
			"changeType": enum("", "CREATE", "UPDATE", "DELETE"),
			"eventType": enum("", "STATE_MACHINE_START", "STATE_MACHINE_FINISH", "CANCEL", "FORCE_SUCCESS",
				"WORKFLOW_FOUND", "WORKFLOW_NOT_FOUND", "WORKFLOW_SKIP", "TRANSITION_MAKE", "TRANSITION_NOT_FOUND",
				"TRANSITION_NOT_MATCH_CRITERION", "TRANSITION_ABORTED", "PROCESS_NOT_MATCH_CRITERION",
				"PAUSE_FOR_PROCESSING", "STATE_PROCESS_RESULT", "SCHEDULED_TRANSITION_ARM",
				"SCHEDULED_TRANSITION_FIRE", "SCHEDULED_TRANSITION_EXPIRE", "SCHEDULED_TRANSITION_CANCEL"),
			"state": str(""),
			"data":  nullable(freeObj("Event data, e.g. `{\"success\":true}` on STATE_MACHINE_FINISH.")),
		}, "auditEventType", "severity", "utcTime", "entityId"),

		// Messaging.
		"NewMessageRequest": obj("", Props{
			"payload":  anyJSON("The message content, any JSON value (null allowed)."),
			"metaData": withDesc(&Schema{Type: SchemaType{"object"}}, "Flat key/value metadata."),
		}, "payload"),
		"EdgeMessage": obj("A stored message.", Props{
			"header": obj("", Props{
				"subject":         str(""),
				"contentType":     str(""),
				"contentLength":   integer("int64", ""),
				"contentEncoding": str(""),
				"messageId":       str(""),
				"userId":          str(""),
				"recipient":       str(""),
				"replyTo":         str(""),
				"correlationId":   str(""),
			}, "subject", "contentType", "contentLength", "contentEncoding"),
			"metaData": withDesc(&Schema{Type: SchemaType{"object"}}, ""),
			"content":  anyJSON("The payload as stored (compacted JSON)."),
		}, "header", "content"),
		"MessageDeleteResult": obj("", Props{"entityIds": arr(uuidS(""), "")}, "entityIds"),
		"MessageBatchDeleteResult": obj("", Props{
			"entityIds": arr(uuidS(""), "The ids as sent."),
			"success":   boolean(""),
		}, "entityIds", "success"),

		// Account.
		"AccountInfo": obj("The calling principal's account.", Props{
			"userAccountInfo": obj("", Props{
				"userId":   str(""),
				"userName": str(""),
				"legalEntity": obj("The tenant.", Props{
					"id":   str(""),
					"name": str(""),
				}, "id"),
				"roles":               arr(obj("", Props{"id": str("Role name, e.g. ROLE_ADMIN.")}, "id"), ""),
				"currentSubscription": ref("Subscription"),
			}, "userId", "legalEntity", "roles"),
		}, "userAccountInfo"),
		"Subscription": obj("", Props{
			"id":            str(""),
			"legalEntityId": str(""),
			"status":        str(""),
			"tierName":      str(""),
			"periodFrom":    dateTime(""),
			"periodTo":      dateTime(""),
			"limits":        arr(freeObj(""), ""),
		}, "id", "status"),
		"Subscriptions": obj("", Props{"subscriptions": arr(ref("Subscription"), "")}, "subscriptions"),

		// IAM: tokens and machine clients.
		"TokenRequest": withDesc(&Schema{
			Type: SchemaType{"object"},
			Properties: Props{
				"grant_type":    enum("", "client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange"),
				"subject_token": str("Token exchange only: the user's JWT to act on behalf of."),
				"subject_token_type": enum("Token exchange only.",
					"urn:ietf:params:oauth:token-type:jwt"),
				"client_id":     str("client_secret_post only (instead of HTTP Basic)."),
				"client_secret": str("client_secret_post only (instead of HTTP Basic); never in the URL."),
			},
			Required: []string{"grant_type"},
			If:       &Schema{Properties: Props{"grant_type": &Schema{Const: "urn:ietf:params:oauth:grant-type:token-exchange"}}},
			Then:     &Schema{Required: []string{"subject_token", "subject_token_type"}},
		}, "OAuth 2.0 token request (client credentials, or RFC 8693 token exchange)."),
		"TokenResponse": obj("An access token. No refresh token is issued.", Props{
			"access_token":      str("RS256-signed JWT."),
			"token_type":        enum("", "Bearer"),
			"expires_in":        integer("int64", "Lifetime in seconds (SVC_JWT_EXPIRY_SECONDS)."),
			"issued_token_type": enum("Token exchange only.", "urn:ietf:params:oauth:token-type:jwt"),
		}, "access_token", "token_type", "expires_in"),
		"OAuthError": obj("OAuth 2.0 error (RFC 6749 5.2); the token endpoint never answers problem+json.", Props{
			"error": enum("", "invalid_request", "invalid_client", "invalid_grant", "unsupported_grant_type",
				"access_denied", "server_error", "method_not_allowed", "unsupported_token_type", "unauthorized_client",
				"temporarily_unavailable"),
			"error_description": str("Human-readable detail; defaults to the error code."),
		}, "error", "error_description"),
		"TechnicalUser": obj("A machine client (its secret is never shown again).", Props{
			"clientId":       str(""),
			"creationDate":   dateTime(""),
			"lastUpdateDate": dateTime(""),
			"roles":          arr(str(""), ""),
		}, "clientId", "roles"),
		"TechnicalUserCredentials": obj("Client credentials (RFC 7591 shape). The secret is shown only in this response.", Props{
			"client_id":                str("16 characters."),
			"client_secret":            str("Capture it now: svc keeps only a hash."),
			"grant_type":               enum("", "client_credentials"),
			"client_id_issued_at":      integer("int64", "Unix seconds."),
			"client_secret_expires_at": integer("int64", "Always 0 (the secret does not expire)."),
			"roles":                    arr(str(""), "ROLE_M2M, plus ROLE_ADMIN when created with withAdminRole."),
		}, "client_id", "client_secret", "grant_type", "client_secret_expires_at", "roles"),
		"TechnicalUserDeleted": obj("", Props{
			"message":  str(""),
			"clientId": str(""),
		}, "message", "clientId"),

		// IAM: keys.
		"JwtKeyPair": obj("A signing keypair; only the public part is ever returned.", Props{
			"keyId":     str("JWT `kid` (32 hex characters)."),
			"algorithm": enum("", "RS256"),
			"publicKey": strF("byte", "Base64 X.509 SubjectPublicKeyInfo (DER)."),
			"active":    boolean(""),
			"validFrom": dateTime(""),
			"validTo":   dateTime(""),
		}, "keyId", "algorithm", "publicKey", "active", "validFrom"),
		"IssueJwtKeyPairRequest": obj("", Props{
			"algorithm":                enum("Only RS256; defaults to RS256.", "RS256"),
			"audience":                 enum("`client` keys sign service-issued tokens.", "human", "client"),
			"validFrom":                dateTime("Default now."),
			"validTo":                  dateTime("Default validFrom + SVC_IAM_KEYPAIR_DEFAULT_VALIDITY_DAYS."),
			"invalidateCurrent":        boolean("Retire the current key of this audience."),
			"invalidateGracePeriodSec": gracePeriod("How long the retired key still verifies."),
		}, "audience"),
		"InvalidateKeyRequest": obj("", Props{
			"gracePeriodSec": gracePeriod("How long the key still verifies after invalidation."),
		}),
		"ReactivateKeyRequest": obj("", Props{
			"validFrom": dateTime("Default now."),
			"validTo":   dateTime("Must be in the future."),
		}, "validTo"),
		"Jwk": withDesc(&Schema{
			Type: SchemaType{"object"},
			Properties: Props{
				"kty": enum("", "RSA"),
				"kid": str("Must equal keyId when present."),
				"n":   str("Modulus, base64url."),
				"e":   str("Exponent, base64url."),
				"alg": str(""),
				"use": str(""),
			},
			Required:             []string{"kty", "n", "e"},
			AdditionalProperties: &Additional{Allowed: true},
		}, "An RSA public key as a JWK (RFC 7517); private members are rejected."),
		"TrustedKey": obj("An external public key trusted for tokens of this tenant.", Props{
			"keyId":         str(""),
			"legalEntityId": str("Owning tenant."),
			"jwk":           ref("Jwk"),
			"audience":      enum("", "human", "client"),
			"active":        boolean(""),
			"validFrom":     dateTime(""),
			"validTo":       dateTime(""),
			"issuers":       arr(str(""), "Accepted `iss` values."),
		}, "keyId", "legalEntityId", "jwk", "audience", "active", "validFrom"),
		"RegisterTrustedKeyRequest": obj("Registers or replaces (same tenant) a trusted key.", Props{
			"keyId":                    keyIDSchema("Key id; the JWT `kid`."),
			"jwk":                      ref("Jwk"),
			"audience":                 enum("", "human", "client"),
			"issuers":                  arr(str(""), ""),
			"validFrom":                dateTime("Default now."),
			"validTo":                  dateTime("Default validFrom + SVC_IAM_TRUSTED_KEY_MAX_VALIDITY_DAYS."),
			"invalidatePrevious":       boolean("Invalidate this tenant's other keys of the same audience."),
			"invalidateGracePeriodSec": gracePeriod(""),
		}, "keyId", "jwk", "audience"),

		// IAM: OIDC providers.
		"OidcProvider": obj("A registered OpenID Connect provider.", Props{
			"id":                 uuidS(""),
			"wellKnownConfigUri": strF("uri", ""),
			"active":             boolean("Whether its tokens are accepted."),
			"createdAt":          dateTime(""),
			"issuers":            arr(str(""), ""),
			"expectedAudiences":  arr(str(""), ""),
			"rolesClaim":         str(""),
		}, "id", "wellKnownConfigUri", "active", "createdAt"),
		"RegisterOidcProviderRequest": obj("", Props{
			"wellKnownConfigUri": withDesc(&Schema{Type: SchemaType{"string"}, Format: "uri", MaxLength: ptr(1000)},
				"Discovery document URL; https unless SVC_OIDC_REQUIRE_HTTPS=false."),
			"issuers":           oidcList("Accepted `iss` values; default: the discovery document's issuer."),
			"expectedAudiences": oidcList("Accepted `aud` values; default: audience not checked."),
			"rolesClaim":        withDesc(&Schema{Type: SchemaType{"string"}, MaxLength: ptr(100)}, "Claim holding roles (dotted paths allowed); default SVC_OIDC_ROLES_CLAIM."),
		}, "wellKnownConfigUri"),
		"UpdateOidcProviderRequest": obj("Absent members stay unchanged; null or [] clears (a null rolesClaim reverts to the default).", Props{
			"issuers":           nullable(oidcList("")),
			"expectedAudiences": nullable(oidcList("")),
			"rolesClaim":        nullable(withDesc(&Schema{Type: SchemaType{"string"}, MaxLength: ptr(100)}, "")),
		}),
		"ReactivateOidcProviderRequest": obj("", Props{
			"reactivateKeys": boolean("Re-fetch the provider's keys (default true)."),
		}),

		// SQL schema.
		"SqlSchema": obj("A SQL schema derived from entity models.", Props{
			"id":         uuidS(""),
			"schemaName": withDesc(&Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(1024)}, ""),
			"tables":     arr(ref("SqlTable"), ""),
		}, "schemaName", "tables"),
		"SqlTable": obj("", Props{
			"tableName":       str(""),
			"metadataClassId": uuidS("Model id."),
			"uniformedPath":   str(""),
			"fields":          arr(ref("SqlField"), ""),
			"hidden":          boolean(""),
			"modelUpdateDate": integer("int64", ""),
		}, "tableName", "metadataClassId", "uniformedPath", "fields", "hidden"),
		"SqlField": obj("", Props{
			"fieldName":     str(""),
			"fieldKey":      str(""),
			"fieldCategory": str(""),
			"dataType":      str(""),
			"isArray":       boolean(""),
			"hidden":        boolean(""),
			"flatten":       boolean(""),
			"arrayFields":   arr(ref("SqlField"), ""),
		}, "fieldName", "fieldKey", "fieldCategory", "dataType"),

		// Stream data.
		"StreamDataConfig": obj("A saved stream-data definition.", Props{
			"id":            uuidS(""),
			"name":          str(""),
			"description":   str(""),
			"owner":         str(""),
			"createDate":    dateTime(""),
			"streamDataDef": ref("StreamDataDef"),
		}),
		"StreamDataDef": obj("Which entities and columns a stream reads.", Props{
			"requestClass":   str("The model read, as `<entityName>.<modelVersion>` (or a model id)."),
			"rangeCondition": freeObj(""),
			"rangeOrder":     str(""),
			"condition":      freeObj(""),
			"columns": arr(obj("", Props{
				"name": str(""),
				"type": enum("", "SIMPLE_COLUMN", "ALIAS"),
			}), ""),
			"colDefs":   arr(freeObj("Column path definition."), ""),
			"aliasDefs": arr(freeObj("Alias definition."), ""),
		}),
		"StreamDataConfigs": obj("", Props{"data": arr(ref("StreamDataConfig"), "")}),
		"StreamDataRequest": obj("", Props{
			"sdDef": ref("StreamDataDef"),
			"pointTime": integer("int64", "As-at instant, epoch milliseconds; null or not positive: now. An instant past "+
				"2262-04-11T23:47:16.853Z (9223372036853) is 400 naming the field."),
			"offset":       withDesc(&Schema{Type: SchemaType{"integer"}, Format: "int64", Minimum: ptr[int64](0), Maximum: ptr[int64](streamdata.MaxPosition)}, positionDoc),
			"length":       integer("int32", ""),
			"fromPosIndex": withDesc(&Schema{Type: SchemaType{"integer"}, Format: "int64", Minimum: ptr[int64](0), Maximum: ptr[int64](streamdata.MaxPosition)}, positionDoc),
		}),
		"StreamDataRows": obj("", Props{
			"pointTime":            integer("int64", ""),
			"offset":               integer("int64", ""),
			"pageSize":             integer("int32", ""),
			"lastRowIndexPosition": integer("int64", ""),
			"rows": arr(obj("", Props{
				"key":           uuidS(""),
				"unitId":        str(""),
				"sortValues":    arr(anyJSON(""), ""),
				"columnsValues": freeObj(""),
			}), ""),
		}),
		"StreamDataIndex": obj("", Props{
			"decision":         enum("", "NO_ACCESS", "FULL_ACCESS", "PARTIAL_ACCESS", "NOT_FOUND"),
			"id":               str(""),
			"indexId":          str(""),
			"indexName":        str(""),
			"rangeField":       freeObj(""),
			"noneRangeFields":  arr(freeObj(""), ""),
			"createDate":       dateTime(""),
			"readyForQuerying": boolean(""),
			"returnsList":      boolean(""),
			"persisted":        boolean(""),
		}, "decision"),
		"QueryPlanRequest": obj("", Props{
			"condition": freeObj(""),
			"aliasDefs": arr(freeObj(""), ""),
		}),
		"QueryPlan": obj("", Props{
			"original":  freeObj(""),
			"optimized": freeObj(""),
		}),
	}
}

func gracePeriod(desc string) *Schema {
	return withDesc(&Schema{Type: SchemaType{"integer"}, Minimum: ptr[int64](0), Maximum: ptr[int64](31622400)}, desc)
}

func keyIDSchema(desc string) *Schema {
	return withDesc(&Schema{Type: SchemaType{"string"}, Pattern: `^[A-Za-z0-9._-]{1,128}$`}, desc)
}

func oidcList(desc string) *Schema {
	return withDesc(&Schema{Type: SchemaType{"array"}, MaxItems: ptr(10),
		Items: &Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(1000)}}, desc)
}

func problemSchema() *Schema {
	return obj("RFC 9457 problem detail; every API error except the token endpoint's.", Props{
		"type":     str("Always about:blank."),
		"title":    str("HTTP reason phrase."),
		"status":   integer("int32", "HTTP status."),
		"detail":   str("`<ERROR_CODE>: <message>`; 5xx details are sanitized and name the ticket."),
		"instance": str("Request path without the context path."),
		"ticket":   uuidS("5xx only: quote it to find the server log entry."),
		"properties": withDesc(&Schema{
			Type:     SchemaType{"object"},
			Required: []string{"errorCode"},
			Properties: Props{
				"errorCode": str("Machine-readable error code, e.g. MODEL_NOT_FOUND."),
				"retryable": boolean("Present on every 4xx; true when the same request may succeed later."),
			},
			AdditionalProperties: &Additional{Allowed: true},
		}, "Error code plus error-specific members (entityId, parameter, ...)."),
	}, "type", "title", "status", "detail", "instance", "properties")
}
