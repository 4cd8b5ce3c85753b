package fast

import (
	"regexp"
	"strings"
)

// Map is an ordered-enough JSON object for the document builder; go-json
// sorts map keys, which keeps the output stable.
type Map = map[string]any

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// openAPISpec builds the document. Schemas and per-operation detail grow
// with each API area.
func openAPISpec(routes []Route) Map {
	paths := Map{}
	for _, r := range routes {
		item, _ := paths[r.Path].(Map)
		if item == nil {
			item = Map{}
			paths[r.Path] = item
		}
		op := Map{
			"operationId": r.OpID,
			"tags":        []string{r.Tag},
			"summary":     r.Summary,
			"responses":   responsesFor(r),
		}
		var params []Map
		for _, m := range pathParam.FindAllStringSubmatch(r.Path, -1) {
			params = append(params, Map{"name": m[1], "in": "path", "required": true, "schema": Map{"type": "string"}})
		}
		if params != nil {
			op["parameters"] = params
		}
		if r.Access == Public {
			op["security"] = []Map{}
		}
		item[strings.ToLower(r.Method)] = op
	}
	tags := []Map{}
	for _, t := range []struct{ name, desc string }{
		{TagEntity, "/entity/: create, update, delete, transition, stats"},
		{TagModel, "/model/: import, export, lock, unlock, delete, changeLevel, workflow"},
		{TagSearch, "/search/: snapshot and direct search"},
		{TagAccount, "/account/: account info, subscriptions"},
		{TagMachine, "/clients/: machine-to-machine client management"},
		{TagAudit, "/audit/: audit log retrieval"},
		{TagMessage, "/message/: message CRUD"},
		{TagIAM, "/oauth/: token, key management, OIDC providers"},
		{TagSQL, "/sql/schema/: SQL schema generation and management"},
		{TagPlatform, "/platform-api/stream-data/: stream-data operations"},
	} {
		tags = append(tags, Map{"name": t.name, "description": t.desc})
	}
	return Map{
		"openapi": "3.1.0",
		"info": Map{
			"title":       "svc",
			"version":     "1.0",
			"description": "svc entity service: entities, models, workflows, search and an OAuth 2.0 authorization server.",
		},
		"servers":  []Map{{"url": serverURLMarker}},
		"tags":     tags,
		"security": []Map{{"bearerAuth": []string{}}},
		"paths":    paths,
		"components": Map{
			"securitySchemes": Map{
				"bearerAuth": Map{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
			},
			"schemas": Map{
				"ProblemDetail": problemSchema(),
			},
		},
	}
}

func problemSchema() Map {
	return Map{
		"type":     "object",
		"required": []string{"type", "title", "status", "detail", "instance", "properties"},
		"properties": Map{
			"type":     Map{"type": "string"},
			"title":    Map{"type": "string"},
			"status":   Map{"type": "integer"},
			"detail":   Map{"type": "string"},
			"instance": Map{"type": "string"},
			"ticket":   Map{"type": "string", "format": "uuid"},
			"properties": Map{
				"type":                 "object",
				"required":             []string{"errorCode"},
				"properties":           Map{"errorCode": Map{"type": "string"}, "retryable": Map{"type": "boolean"}},
				"additionalProperties": true,
			},
		},
	}
}

func problemResponse(desc string) Map {
	return Map{"description": desc, "content": Map{"application/problem+json": Map{"schema": Map{"$ref": "#/components/schemas/ProblemDetail"}}}}
}

func responsesFor(r Route) Map {
	resp := Map{
		"200":     Map{"description": "OK", "content": Map{"application/json": Map{"schema": Map{}}}},
		"400":     problemResponse("Bad request"),
		"default": problemResponse("Error"),
	}
	if r.Access != Public {
		resp["401"] = problemResponse("Unauthorized")
	}
	if r.Access == Admin {
		resp["403"] = problemResponse("Forbidden")
	}
	if r.Handler == nil {
		resp["501"] = problemResponse("Not implemented")
	}
	return resp
}
