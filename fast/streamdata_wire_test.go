package fast

import (
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"
)

// TestStreamDataWireBytes pins the exact bytes of the stream-data answers
// the HTTP adapter encodes (saved definitions one by one, listed and
// exported, the index list, the delete result) and the exact details of
// the request errors it decodes, on the memory engine; the other stream
// tests decode the answers and would not see a changed key order, number
// spelling or wording.
func TestStreamDataWireBytes(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t, "memory")
	ids := e.seedStream("t1", 4, 2)
	def := `{"requestClass":"sd.1","rangeCondition":{"@bean":"com.cyoda.core.conditions.queryable.GreaterThanEquals","fieldName":"$.n","value":{"@type":"java.lang.Integer","value":0}},"rangeOrder":"ASC","columns":[{"name":"id"},{"name":"$.name"}]}`
	const id1, id2 = "6f1c2a80-0000-1000-8000-000000000001", "6f1c2a80-0000-1000-8000-000000000002"
	e.call("t1", "POST", "/platform-api/stream-data/import?failOnExists=true", []byte(`{"data":[`+
		`{"id":"`+id1+`","name":"one <&>","description":"d\u00e9","owner":"o","createDate":"2026-01-02T03:04:05.678Z","streamDataDef":`+def+`},`+
		`{"id":"`+id2+`","name":"two","createDate":1767323045000,"streamDataDef":`+def+`}]}`)).ok(t)

	cfg1 := `{"@bean":"com.cyoda.core.streamdata.StreamDataConfigDef","id":"` + id1 + `","name":"one \u003c\u0026\u003e","description":"dé","owner":"o","createDate":"2026-01-02T03:04:05.678Z","streamDataDef":` + def + `}`
	cfg2 := `{"@bean":"com.cyoda.core.streamdata.StreamDataConfigDef","id":"` + id2 + `","name":"two","description":"","owner":"u-t1","createDate":"2026-01-02T03:04:05.000Z","streamDataDef":` + def + `}`
	for _, c := range []struct{ path, want string }{
		{"/platform-api/stream-data/config?configId=" + id1, cfg1},
		{"/platform-api/stream-data/config/list", `[` + cfg2 + `,` + cfg1 + `]`},
		{"/platform-api/stream-data/export-by-ids?includeIds=" + id1, `{"@bean":"com.cyoda.core.streamdata.StreamDataConfigDefContainer","data":{"@meta":"com.cyoda.core.streamdata.StreamDataConfigDef[]","value":[` + cfg1 + `]}}`},
		{"/platform-api/stream-data/export-by-class?entityClass=none.1", `{"@bean":"com.cyoda.core.streamdata.StreamDataConfigDefContainer","data":{"@meta":"com.cyoda.core.streamdata.StreamDataConfigDef[]","value":[]}}`},
		{"/platform-api/stream-data/index/list?entityClass=sd.1", `[{"indexId":"96380552-5e97-5536-8ced-0ff02a7c6f1e","indexName":"builtin_creationDate","rangeField":{"columnName":"creationDate","columnPath":"creationDate","type":"LEAF","decision":"FULL_ACCESS"},"noneRangeFields":[],"createDate":null,"readyForQuerying":true,"returnsList":false,"persisted":false,"decision":"FULL_ACCESS"},{"indexId":"fb0cc3b0-1fdf-56db-84fb-132e20d054d0","indexName":"builtin_state","rangeField":{"columnName":"state","columnPath":"state","type":"LEAF","decision":"FULL_ACCESS"},"noneRangeFields":[],"createDate":null,"readyForQuerying":true,"returnsList":false,"persisted":false,"decision":"FULL_ACCESS"}]`},
	} {
		if got := string(e.call("t1", "GET", c.path, nil).ok(t).body); got != c.want {
			t.Errorf("GET %s:\n got %s\nwant %s", c.path, got, c.want)
		}
	}

	for _, c := range []struct{ body, want string }{
		{`{"sdDef":` + def + `}`, `{"explainNote":"no EXPLAIN on this engine (memory or sqlite): the original and optimized plan nodes are the plan","optimized":{"type":"ALL","children":[{"type":"CONSTRAINT","conditions":["$.n GREATER_OR_EQUAL 0"]}]},"original":{"type":"CONSTRAINT","operator":"AND","children":[{"type":"CONSTRAINT","conditions":["$.n GREATER_OR_EQUAL 0"]}]},"pgExplain":null,"servedBy":null,"suggestedIndexes":[{"entityClass":"sd.1","name":"sd_n","rangeColPath":"$.n","columns":[]}]}`},
		{`{"entityClass":"sd.1","condition":{"type":"simple","jsonPath":"$.n","operatorType":"EQUALS","value":1}}`, `{"explainNote":"no EXPLAIN on this engine (memory or sqlite): the original and optimized plan nodes are the plan","optimized":{"type":"ALL","children":[{"type":"CONSTRAINT","conditions":["$.n EQUALS 1"]}]},"original":{"type":"CONSTRAINT","conditions":["$.n EQUALS 1"]},"pgExplain":null,"servedBy":null,"suggestedIndexes":[{"entityClass":"sd.1","name":"sd_n_creationDate","rangeColPath":"creationDate","columns":["$.n"]}]}`},
	} {
		if got := string(e.call("t1", "POST", "/platform-api/stream-data/query-plan", []byte(c.body)).ok(t).body); got != c.want {
			t.Errorf("query-plan %s:\n got %s\nwant %s", c.body, got, c.want)
		}
	}
	for _, c := range []struct{ body, detail string }{
		{`[]`, "BAD_REQUEST: stream definition: the body must be a QueryPlanRequest object map[errorCode:BAD_REQUEST retryable:false]"},
		{`{"entityClass":1}`, "BAD_REQUEST: stream definition: the request does not parse: json: cannot unmarshal number into Go struct field planRequest.entityClass of type string map[errorCode:BAD_REQUEST retryable:false]"},
	} {
		r := e.call("t1", "POST", "/platform-api/stream-data/query-plan", []byte(c.body))
		props := r.problem(t, 400, "BAD_REQUEST")
		if got := fmt.Sprint(r.obj(t)["detail"], " ", props); got != c.detail {
			t.Errorf("query-plan %s:\n got %q\nwant %q", c.body, got, c.detail)
		}
	}

	for _, c := range []struct{ method, path, body, detail string }{
		{"POST", "/platform-api/stream-data/config", `{"name":1,"streamDataDef":` + def + `}`, "BAD_REQUEST: stream definition: the body does not parse: json: cannot unmarshal number into Go struct field configDoc.name of type string map[errorCode:BAD_REQUEST retryable:false]"},
		{"PUT", "/platform-api/stream-data/config", `{"id":"x","streamDataDef":` + def + `}`, "BAD_REQUEST: configId \"x\" is not a UUID map[errorCode:BAD_REQUEST parameter:configId retryable:false]"},
		{"POST", "/platform-api/stream-data/import", `{"data":[{"id":"x","streamDataDef":` + def + `},{"streamDataDef":{"rangeOrder":"UP"}}]}`, "BAD_REQUEST: id \"x\" is not a UUID map[errorCode:BAD_REQUEST parameter:id retryable:false]"},
		{"POST", "/platform-api/stream-data/import", `{"data":{"@meta":"x[]"}}`, "BAD_REQUEST: stream definition: data must be an array or a {\"@meta\", \"value\"} array wrapper map[errorCode:BAD_REQUEST field:data retryable:false]"},
		{"POST", "/platform-api/stream-data/import", `{"data":[{"description":false}]}`, "BAD_REQUEST: stream definition: the body does not parse: json: cannot unmarshal bool into Go struct field configDoc.description of type string map[errorCode:BAD_REQUEST retryable:false]"},
	} {
		r := e.call("t1", c.method, c.path, []byte(c.body))
		props := r.problem(t, 400, "BAD_REQUEST")
		if got := fmt.Sprint(r.obj(t)["detail"], " ", props); got != c.detail {
			t.Errorf("%s %s %s:\n got %q\nwant %q", c.method, c.path, c.body, got, c.detail)
		}
	}

	// A page at a fixed point in time: rows by $.n, then id.
	pt := time.Now().UnixMilli()
	order := make([]string, 0, len(ids))
	for id := range ids {
		order = append(order, id)
	}
	sort.Slice(order, func(i, j int) bool {
		if ids[order[i]]%2 != ids[order[j]]%2 {
			return ids[order[i]]%2 < ids[order[j]]%2
		}
		return order[i] < order[j]
	})
	want := `{"pointTime":` + strconv.FormatInt(pt, 10) + `,"offset":1,"pageSize":2,"rows":[`
	for k, id := range order[1:3] {
		if k > 0 {
			want += ","
		}
		want += fmt.Sprintf(`{"key":"%s","unitId":null,"sortValues":[%d],"columnsValues":{"id":"%s","$.name":"e%03d"}}`, id, ids[id]%2, id, ids[id])
	}
	want += `],"lastRowIndexPosition":2}`
	page := e.call("t1", "POST", "/platform-api/stream-data/get", []byte(`{"sdDef":`+def+`,"pointTime":`+strconv.FormatInt(pt, 10)+`,"offset":1,"length":2}`)).ok(t)
	if got := string(page.body); got != want {
		t.Errorf("page:\n got %s\nwant %s", got, want)
	}

	r := e.call("t1", "DELETE", "/platform-api/stream-data/delete", []byte(`{"sdDef":`+def+`,"length":1}`)).ok(t)
	if got, want := string(r.body), `{"numberOfEntitites":4,"numberOfEntititesRemoved":4,"idToError":{}}`; got != want {
		t.Errorf("delete:\n got %s\nwant %s", got, want)
	}

	for _, c := range []struct{ body, detail string }{
		{`[]`, "BAD_REQUEST: stream definition: the body must be a StreamDataRequest object map[errorCode:BAD_REQUEST retryable:false]"},
		{`{"sdDef":1`, "BAD_REQUEST: stream definition: the request does not parse: unexpected end of JSON input map[errorCode:BAD_REQUEST retryable:false]"},
		{`{"sdDef":` + def + `,"offset":-1}`, "BAD_REQUEST: offset must be an integer from 0 to 9007199254740991 map[errorCode:BAD_REQUEST field:offset invalidValue:-1 retryable:false]"},
		{`{"sdDef":` + def + `,"fromPosIndex":"1"}`, "BAD_REQUEST: fromPosIndex must be an integer from 0 to 9007199254740991 map[errorCode:BAD_REQUEST field:fromPosIndex invalidValue:\"1\" retryable:false]"},
		{`{"sdDef":` + def + `,"pointTime":"x"}`, "BAD_REQUEST: pointTime must be epoch milliseconds of an instant from 1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z map[errorCode:BAD_REQUEST field:pointTime invalidValue:\"x\" retryable:false]"},
		{`{"offset":1}`, "BAD_REQUEST: stream definition: streamDataDef is missing map[errorCode:BAD_REQUEST field:streamDataDef retryable:false]"},
		{`{"sdDef":` + def + `,"length":"x"}`, "BAD_REQUEST: stream definition: the request does not parse: json: cannot unmarshal string into Go struct field wireRequest.length of type int map[errorCode:BAD_REQUEST retryable:false]"},
		{`{"sdDef":{"rangeOrder":"UP"}}`, "BAD_REQUEST: stream definition: rangeOrder must be ASC or DESC, got \"UP\" map[errorCode:BAD_REQUEST field:rangeOrder retryable:false]"},
	} {
		for _, op := range []struct{ method, path string }{{"POST", "/platform-api/stream-data/get"}, {"DELETE", "/platform-api/stream-data/delete"}} {
			r := e.call("t1", op.method, op.path, []byte(c.body))
			props := r.problem(t, 400, "BAD_REQUEST")
			if got := fmt.Sprint(r.obj(t)["detail"], " ", props); got != c.detail {
				t.Errorf("%s %s:\n got %q\nwant %q", op.method, c.body, got, c.detail)
			}
		}
	}
}
