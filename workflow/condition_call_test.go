package workflow

import (
	"reflect"
	"testing"
	"time"
)

func TestFunctionConditionCall(t *testing.T) {
	meta := Meta{ID: "e1", ModelName: "m", ModelVersion: 2, State: "S"}
	auth := Auth{Kind: "user", ID: "u", Roles: []string{"R"}}
	f, err := ParseFunctionCondition([]byte(`{"name":"fn","config":{"calculationNodesTags":" a, b ,","responseTimeoutMs":250,"context":"ctx"}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Call("t1", auth, meta, []byte(`{"x":1}`))
	if c.Criteria != "fn" || c.Target != TargetNone || c.Tenant != "t1" || !reflect.DeepEqual(c.Auth, auth) || c.Meta != meta ||
		!reflect.DeepEqual(c.Tags, []string{"a", "b"}) || c.TagsCSV != " a, b ," || c.Timeout != 250*time.Millisecond ||
		c.Parameters != "ctx" || string(c.Data) != `{"x":1}` || c.Workflow != "" || c.Transition != "" {
		t.Fatalf("call %+v", c)
	}
	// Defaults: any member, 30 s, the entity attached; attachEntity false
	// leaves it out.
	f, _ = ParseFunctionCondition([]byte(`{"name":"fn"}`))
	if c := f.Call("t1", auth, meta, []byte(`{}`)); c.Tags != nil || c.Timeout != DefaultResponseTimeoutMs*time.Millisecond || c.Data == nil {
		t.Fatalf("defaults %+v", c)
	}
	f, _ = ParseFunctionCondition([]byte(`{"name":"fn","config":{"attachEntity":false}}`))
	if c := f.Call("t1", auth, meta, []byte(`{}`)); c.Data != nil {
		t.Fatalf("attachEntity false sent %s", c.Data)
	}
	if _, err := ParseFunctionCondition([]byte(`{"name":"fn","config":{"responseTimeoutMs":"soon"}}`)); err == nil {
		t.Fatal("a string timeout parsed")
	}
}
