package crud

import (
	"context"
	"log/slog"
	"testing"

	json "github.com/goccy/go-json"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/entity"
	"svc/model"
	"svc/search"
	"svc/storage"
	"svc/storage/memory"
)

// FuzzCrudRequest feeds arbitrary CRUD events through the payload parser
// and the handlers, over the real entity, model and search services on
// memory storage: nothing may panic, a rejection is only ever
// InvalidArgument or Unimplemented, and every answer is a JSON object with
// an id and a success flag (an error object whenever success is false).
func FuzzCrudRequest(f *testing.F) {
	f.Add(wire.TypeEntityCreateRequest, `{"id":"1","dataFormat":"JSON","payload":{"model":{"name":"m","version":1},"data":{"a":1}}}`, uint8(0), false)
	f.Add(wire.TypeEntityCreateRequest, `{"payload":{"model":{"name":"m","version":1},"data":[{"a":1},{"a":2}]}}`, uint8(1), true)
	f.Add(wire.TypeEntityCreateCollectionRequest, `{"payloads":[{"model":{"name":"m","version":1},"data":{"a":3}}]}`, uint8(1), false)
	f.Add(wire.TypeEntityUpdateCollectionRequest, `{"payloads":[{"entityId":"00000000-0000-0000-0000-000000000001","data":{}}]}`, uint8(1), false)
	f.Add(wire.TypeEntityPatchRequest, `{"patchFormat":"MERGE_PATCH","payload":{"entityId":"x","patch":{"a":null},"ifMatch":"*"}}`, uint8(0), false)
	f.Add(wire.TypeEntityGetRequest, `{"entityId":"00000000-0000-0000-0000-000000000001","pointInTime":"2024-01-01 10:00:00"}`, uint8(2), false)
	f.Add(wire.TypeEntitySearchRequest, `{"model":{"name":"m","version":1},"condition":{"type":"simple","jsonPath":"$.a","operatorType":"EQUALS","value":1},"limit":5,"orderBy":[{"path":"id","source":"meta","desc":true}]}`, uint8(3), false)
	f.Add(wire.TypeEntityGetAllRequest, `{"model":{"name":"m","version":1},"pageSize":-1,"pageNumber":2147483647}`, uint8(3), false)
	f.Add(wire.TypeEntityStatsByStateGetRequest, `{"states":["CREATED"]}`, uint8(3), true)
	f.Add(wire.TypeModelImportRequest, `{"model":{"name":"n","version":1},"payload":[1,2]}`, uint8(4), false)
	f.Add(wire.TypeModelTransitionRequest, `{"model":{"name":"m","version":1},"transition":"UNLOCK"}`, uint8(4), false)
	f.Add("Nope", `[`, uint8(2), false)

	me := memory.NewEntities()
	ms := memory.NewModels()
	msvc := model.New(ms, nil)
	ssvc := search.New(ms, memory.NewSearch(me), nil, search.Options{})
	esvc := entity.New(me, ms, entity.GateOf(msvc), entity.WithConditions(ssvc))
	msvc.SetEntityCounter(esvc)
	key := storage.ModelKey{Name: "m", Version: 1}
	if _, err := msvc.Import(context.Background(), "t1", key, model.FormatJSON, model.ConvSampleData, []byte(`{"a":1,"b":"x"}`)); err != nil {
		f.Fatal(err)
	}
	if _, err := msvc.Lock(context.Background(), "t1", key); err != nil {
		f.Fatal(err)
	}
	s := New(Services{Entities: esvc, Models: msvc, Search: ssvc}, testTokens, slog.New(slog.DiscardHandler))
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer m2m-t1"))
	rpcs := []string{rpcEntityManage, rpcEntityManageCollection, rpcEntitySearch, rpcEntitySearchCollection, rpcModelManage}

	f.Fuzz(func(t *testing.T, typ, payload string, rpc uint8, binary bool) {
		ev := &ce.CloudEvent{Id: "fz", Type: typ, Data: &ce.CloudEvent_TextData{TextData: payload}}
		if binary {
			ev.Data = &ce.CloudEvent_BinaryData{BinaryData: []byte(payload)}
		}
		var out []*ce.CloudEvent
		err := s.serveCrud(ctx, ev, rpcs[int(rpc)%len(rpcs)], func(e *ce.CloudEvent) error {
			out = append(out, e)
			return nil
		})
		if err != nil {
			if c := status.Code(err); c != codes.InvalidArgument && c != codes.Unimplemented {
				t.Fatalf("rejected with %v", err)
			}
			return
		}
		for _, e := range out {
			var b wire.Base
			if jerr := json.Unmarshal([]byte(e.GetTextData()), &b); jerr != nil || b.ID != "fz" || (!b.Success && b.Error == nil) {
				t.Fatalf("answer %s %s: %v", e.GetType(), e.GetTextData(), jerr)
			}
		}
	})
}
