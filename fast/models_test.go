package fast

import (
	"fmt"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"svc/model"
	"svc/storage"
)

const personSchema = `{"$":{".age":"INTEGER",".name":"STRING",".tags[*]":"(STRING x 2)","#.items":"OBJECT"},"$.items[*]":{".sku":"STRING","#":"ARRAY_ELEMENT"}}`

func forEachEngine(t *testing.T, run func(t *testing.T, e *modelEnv)) {
	for _, engine := range modelEngines {
		t.Run(engine, func(t *testing.T) { run(t, newModelEnv(t, engine)) })
	}
}

func wantAction(t *testing.T, r apiResp, name string, version int, msg string) {
	t.Helper()
	if r.status != 200 || r.ctype != "application/json" {
		t.Fatalf("got %d %s: %s", r.status, r.ctype, r.body)
	}
	var got model.ActionResult
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	want := model.ActionResult{Success: true, Message: msg, ModelID: model.ID(storage.ModelKey{Name: name, Version: version}),
		ModelKey: model.KeyDTO{Name: name, Version: version}}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, k := range []string{`"success"`, `"message"`, `"modelId"`, `"modelKey"`} {
		if !strings.Contains(string(r.body), k) {
			t.Errorf("body lacks %s: %s", k, r.body)
		}
	}
}

func wantKeyProps(t *testing.T, props map[string]any, name string, version int) {
	t.Helper()
	if props["entityName"] != name || props["entityVersion"] != float64(version) || props["retryable"] != false {
		t.Errorf("properties %v, want entityName %s entityVersion %d retryable false", props, name, version)
	}
}

func TestModelIDIsUUIDv5OfNameDotVersion(t *testing.T) {
	t.Parallel()
	// UUID v5 (URL namespace) of "m0.1" (docs/decisions/0011-simple-view-export-import.md).
	if id := model.ID(storage.ModelKey{Name: "m0", Version: 1}); id != "62856a12-3ed6-55ba-a7d4-aa98acd2b4df" {
		t.Fatalf("ID(m0.1) = %s", id)
	}
}

func TestModelListLockUnlockChangeLevelDelete(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		if r := e.call("A", "GET", "/model/", nil); r.status != 200 || string(r.body) != "[]" {
			t.Fatalf("empty list: %d %s", r.status, r.body)
		}
		before := time.Now().Add(-time.Second)
		e.seed("A", "person", 1, model.Unlocked, personSchema)
		e.seed("A", "person", 2, model.Locked, personSchema)

		r := e.call("A", "GET", "/model/", nil)
		var list []map[string]any
		if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 || len(list) != 2 {
			t.Fatalf("list: %d %s %v", r.status, r.body, err)
		}
		if list[0]["id"] != model.ID(storage.ModelKey{Name: "person", Version: 1}) || list[0]["modelName"] != "person" ||
			list[0]["modelVersion"] != float64(1) || list[0]["currentState"] != "UNLOCKED" || list[1]["currentState"] != "LOCKED" {
			t.Fatalf("list body %s", r.body)
		}
		ts, err := time.Parse(time.RFC3339Nano, list[0]["modelUpdateDate"].(string))
		if err != nil || ts.Before(before) || !strings.HasSuffix(list[0]["modelUpdateDate"].(string), "Z") {
			t.Fatalf("modelUpdateDate %v: %v", list[0]["modelUpdateDate"], err)
		}
		if r := e.call("A", "GET", "/model", nil); r.status != 404 {
			t.Errorf("GET /model without slash: %d", r.status)
		}

		// lock
		wantAction(t, e.call("A", "PUT", "/model/person/1/lock", nil), "person", 1, "Model person:1 locked")
		props := e.call("A", "PUT", "/model/person/1/lock", nil).problem(t, 409, "MODEL_ALREADY_LOCKED")
		wantKeyProps(t, props, "person", 1)
		if props["expectedState"] != "UNLOCKED" || props["actualState"] != "LOCKED" {
			t.Errorf("lock conflict props %v", props)
		}
		// delete a locked model: 409 before anything else
		props = e.call("A", "DELETE", "/model/person/1", nil).problem(t, 409, "MODEL_ALREADY_LOCKED")
		wantKeyProps(t, props, "person", 1)

		// unlock with entities: 409 MODEL_HAS_ENTITIES with the count
		e.entities.set("A", storage.ModelKey{Name: "person", Version: 1}, 3)
		props = e.call("A", "PUT", "/model/person/1/unlock", nil).problem(t, 409, "MODEL_HAS_ENTITIES")
		wantKeyProps(t, props, "person", 1)
		if props["entityCount"] != float64(3) {
			t.Errorf("entityCount %v", props["entityCount"])
		}
		e.entities.set("A", storage.ModelKey{Name: "person", Version: 1}, 0)
		wantAction(t, e.call("A", "PUT", "/model/person/1/unlock", nil), "person", 1, "Model person:1 unlocked")
		props = e.call("A", "PUT", "/model/person/1/unlock", nil).problem(t, 409, "MODEL_ALREADY_UNLOCKED")
		if props["expectedState"] != "LOCKED" || props["actualState"] != "UNLOCKED" {
			t.Errorf("unlock conflict props %v", props)
		}

		// change level: valid on either state, bad value 400 with props
		wantAction(t, e.call("A", "POST", "/model/person/1/changeLevel/TYPE", nil), "person", 1, "model person:1 now at change level TYPE")
		wantAction(t, e.call("A", "POST", "/model/person/2/changeLevel/STRUCTURAL", nil), "person", 2, "model person:2 now at change level STRUCTURAL")
		props = e.call("A", "POST", "/model/person/1/changeLevel/type", nil).problem(t, 400, "INVALID_CHANGE_LEVEL")
		wantKeyProps(t, props, "person", 1)
		if props["suppliedValue"] != "type" || fmt.Sprint(props["validValues"]) != "[ARRAY_LENGTH ARRAY_ELEMENTS TYPE STRUCTURAL]" {
			t.Errorf("change level props %v", props)
		}
		m, _ := e.store.GetModel(t.Context(), "A", storage.ModelKey{Name: "person", Version: 1})
		if m.ChangeLevel != "TYPE" {
			t.Errorf("stored change level %q", m.ChangeLevel)
		}
		// 404 is checked before the value
		e.call("A", "POST", "/model/nope/1/changeLevel/bogus", nil).problem(t, 404, "MODEL_NOT_FOUND")

		// delete with entities, then without
		e.entities.set("A", storage.ModelKey{Name: "person", Version: 1}, 1)
		props = e.call("A", "DELETE", "/model/person/1", nil).problem(t, 409, "MODEL_HAS_ENTITIES")
		if props["entityCount"] != float64(1) {
			t.Errorf("entityCount %v", props["entityCount"])
		}
		e.entities.set("A", storage.ModelKey{Name: "person", Version: 1}, 0)
		wantAction(t, e.call("A", "DELETE", "/model/person/1", nil), "person", 1, "model person:1 deleted")
		props = e.call("A", "DELETE", "/model/person/1", nil).problem(t, 404, "MODEL_NOT_FOUND")
		wantKeyProps(t, props, "person", 1)
		if r := e.call("A", "GET", "/model/", nil); !strings.Contains(string(r.body), `"modelVersion":2`) || strings.Contains(string(r.body), `"modelVersion":1`) {
			t.Errorf("list after delete: %s", r.body)
		}
	})
}

func TestModelNotFoundAndBadParameters(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		for _, c := range []struct{ method, path string }{
			{"PUT", "/model/ghost/3/lock"},
			{"PUT", "/model/ghost/3/unlock"},
			{"DELETE", "/model/ghost/3"},
			{"POST", "/model/ghost/3/changeLevel/TYPE"},
		} {
			props := e.call("A", c.method, c.path, nil).problem(t, 404, "MODEL_NOT_FOUND")
			wantKeyProps(t, props, "ghost", 3)
		}
		props := e.call("A", "PUT", "/model/ghost/x1/lock", nil).problem(t, 400, "BAD_REQUEST")
		if props["parameter"] != "modelVersion" || props["invalidValue"] != "x1" {
			t.Errorf("binding props %v", props)
		}
		// Names are unescaped path segments.
		e.seed("A", "a b", 1, model.Unlocked, `{"$":{}}`)
		wantAction(t, e.call("A", "PUT", "/model/a%20b/1/lock", nil), "a b", 1, "Model a b:1 locked")
		// An escaped slash stays inside the one segment (docs/decisions/0003-http-surface-and-routing.md).
		e.seed("A", "a/b", 1, model.Unlocked, `{"$":{}}`)
		wantAction(t, e.call("A", "PUT", "/model/a%2Fb/1/lock", nil), "a/b", 1, "Model a/b:1 locked")
		if r := e.call("", "GET", "/model/", nil); r.status != 401 {
			t.Errorf("no token: %d", r.status)
		}
	})
}

func TestModelTenantIsolation(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		e.seed("A", "secret", 1, model.Unlocked, personSchema)
		if r := e.call("B", "GET", "/model/", nil); string(r.body) != "[]" {
			t.Errorf("B lists A's models: %s", r.body)
		}
		for _, c := range []struct{ method, path string }{
			{"PUT", "/model/secret/1/lock"},
			{"PUT", "/model/secret/1/unlock"},
			{"DELETE", "/model/secret/1"},
			{"POST", "/model/secret/1/changeLevel/TYPE"},
			{"PUT", "/model/secret/1/unique-keys"},
		} {
			var body []byte
			if strings.HasSuffix(c.path, "unique-keys") {
				body = []byte(`{"uniqueKeys":[]}`)
			}
			e.call("B", c.method, c.path, body).problem(t, 404, "MODEL_NOT_FOUND")
		}
		m, err := e.store.GetModel(t.Context(), "A", storage.ModelKey{Name: "secret", Version: 1})
		if err != nil || m.State != model.Unlocked || m.ChangeLevel != "" || m.Revision != 1 {
			t.Fatalf("B's calls changed A's model: %+v %v", m, err)
		}
		// B's model of the same name is its own.
		e.seed("B", "secret", 1, model.Unlocked, `{"$":{}}`)
		wantAction(t, e.call("B", "PUT", "/model/secret/1/lock", nil), "secret", 1, "Model secret:1 locked")
		if m, _ := e.store.GetModel(t.Context(), "A", storage.ModelKey{Name: "secret", Version: 1}); m.State != model.Unlocked {
			t.Fatal("B's lock locked A's model")
		}
	})
}

func TestModelUniqueKeys(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e *modelEnv) {
		e.seed("A", "person", 1, model.Unlocked, personSchema)
		put := func(body string) apiResp { return e.call("A", "PUT", "/model/person/1/unique-keys", []byte(body)) }
		wantAction(t, put(`{"uniqueKeys":[{"id":"byName","fields":["$.name","$.age"]}]}`), "person", 1, "unique keys set on model person:1")
		m, _ := e.store.GetModel(t.Context(), "A", storage.ModelKey{Name: "person", Version: 1})
		keys, err := model.UniqueKeysOf(m)
		if err != nil || len(keys) != 1 || keys[0].ID != "byName" || strings.Join(keys[0].Fields, ",") != "$.name,$.age" {
			t.Fatalf("stored keys %+v %v", keys, err)
		}
		for body, want := range map[string]string{
			`{"uniqueKeys":[{"id":"k","fields":["$.tags"]}]}`:                               `field "$.tags" is not a known scalar leaf`,
			`{"uniqueKeys":[{"id":"k","fields":["$.tags[*]"]}]}`:                            `is not a known scalar leaf`,
			`{"uniqueKeys":[{"id":"k","fields":["$.items"]}]}`:                              `is not a known scalar leaf`,
			`{"uniqueKeys":[{"id":"k","fields":["$.missing"]}]}`:                            `is not a known scalar leaf`,
			`{"uniqueKeys":[{"id":"k","fields":["name"]}]}`:                                 `is not a known scalar leaf`,
			`{"uniqueKeys":[{"id":"k","fields":[]}]}`:                                       `key "k" has no fields`,
			`{"uniqueKeys":[{"id":"","fields":["$.name"]}]}`:                                `empty id`,
			`{"uniqueKeys":[{"id":"k","fields":["$.name","$.name"]}]}`:                      `duplicate field "$.name"`,
			`{"uniqueKeys":[{"id":"k","fields":["$.name"]},{"id":"k","fields":["$.age"]}]}`: `duplicate key ID "k"`,
		} {
			r := put(body)
			props := r.problem(t, 422, "INVALID_UNIQUE_KEY_DEFINITION")
			wantKeyProps(t, props, "person", 1)
			if !strings.Contains(string(r.body), strings.ReplaceAll(want, `"`, `\"`)) {
				t.Errorf("%s: %s, want %q", body, r.body, want)
			}
		}
		for _, body := range []string{``, `{`, `{"uniqueKeys":{}}`, `{}`, `[]`} {
			put(body).problem(t, 400, "BAD_REQUEST")
		}
		big := `{"uniqueKeys":[],"pad":"` + strings.Repeat("x", model.MaxUniqueKeysBytes) + `"}`
		if r := put(big); !strings.Contains(string(r.body), "larger than") {
			r.problem(t, 400, "BAD_REQUEST")
			t.Errorf("over-limit body: %s", r.body)
		}
		// body errors come before 404
		e.call("A", "PUT", "/model/ghost/1/unique-keys", []byte(`{`)).problem(t, 400, "BAD_REQUEST")
		e.call("A", "PUT", "/model/ghost/1/unique-keys", []byte(`{"uniqueKeys":[]}`)).problem(t, 404, "MODEL_NOT_FOUND")
		// clearing
		wantAction(t, put(`{"uniqueKeys":[]}`), "person", 1, "unique keys set on model person:1")
		m, _ = e.store.GetModel(t.Context(), "A", storage.ModelKey{Name: "person", Version: 1})
		if keys, _ := model.UniqueKeysOf(m); len(keys) != 0 {
			t.Fatalf("keys after clearing: %v", keys)
		}
		// locked model: 409
		e.call("A", "PUT", "/model/person/1/lock", nil)
		props := put(`{"uniqueKeys":[]}`).problem(t, 409, "MODEL_ALREADY_LOCKED")
		wantKeyProps(t, props, "person", 1)
	})
}

func TestModelAreaIs501WithoutService(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, p := range []string{"/api/model/", "/api/model/export/SIMPLE_VIEW/a/1"} {
		if r := do(s, "GET", p); r.StatusCode() != 501 {
			t.Errorf("%s without a model service: %d", p, r.StatusCode())
		}
	}
}
