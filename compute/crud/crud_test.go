package crud_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"svc/compute/crud"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
	"svc/internal/await"
	"svc/storage"
)

var backends = []string{"memory", "sqlite", "postgres"}

func mkey(name string, version int) obj { return obj{"name": name, "version": version} }

// lockedModel imports a sample into name/1 and locks it, over gRPC.
func (e *crudEnv) lockedModel(token, name string) {
	e.t.Helper()
	var imp wire.ModelImportResponse
	if _, err := e.call(token, "model", wire.TypeModelImportRequest, obj{"id": "i", "dataFormat": "JSON",
		"converter": "SAMPLE_DATA", "model": mkey(name, 1),
		"payload": obj{"name": "widget", "price": 12.5, "qty": 3, "tags": []string{"a"}}}, &imp); err != nil || !imp.Success {
		e.t.Fatalf("import: %v %+v", err, imp.Error)
	}
	var tr wire.ModelTransitionResponse
	if _, err := e.call(token, "model", wire.TypeModelTransitionRequest, obj{"id": "l", "model": mkey(name, 1),
		"transition": "LOCK"}, &tr); err != nil || !tr.Success || tr.State != "LOCKED" {
		e.t.Fatalf("lock: %v %+v", err, tr)
	}
}

// create makes one entity of name/1 and returns its id and transaction.
func (e *crudEnv) create(token, name string, data obj) (string, string) {
	e.t.Helper()
	var r wire.TransactionResponse
	typ, err := e.call(token, "manage", wire.TypeEntityCreateRequest, obj{"id": "c", "dataFormat": "JSON",
		"payload": obj{"model": mkey(name, 1), "data": data}}, &r)
	if err != nil || typ != wire.TypeEntityTransactionResponse || !r.Success || len(r.TransactionInfo.EntityIDs) != 1 {
		e.t.Fatalf("create: %v %s %+v", err, typ, r)
	}
	return r.TransactionInfo.EntityIDs[0], r.TransactionInfo.TransactionID
}

// wantClientError asserts an in-band domain failure (docs/decisions/0019-compute-members.md): success false, code
// CLIENT_ERROR, message "<CODE>: <detail>".
func wantClientError(t *testing.T, b wire.Base, code string) {
	t.Helper()
	if b.Success || b.Error == nil || b.Error.Code != "CLIENT_ERROR" || !strings.HasPrefix(b.Error.Message, code+": ") {
		t.Fatalf("want CLIENT_ERROR %s, got success=%v error=%+v", code, b.Success, b.Error)
	}
}

func wantStatus(t *testing.T, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("want gRPC %v, got %v", code, err)
	}
}

// TestModelManageRPC covers entityModelManage: import, export, lock,
// list, unlock, delete, and their domain failures.
func TestModelManageRPC(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newCrudEnv(t, backend, envOptions{})
			e.lockedModel(e.tokA, "part")

			var ex wire.ModelExportResponse
			if _, err := e.call(e.tokA, "model", wire.TypeModelExportRequest, obj{"id": "x", "converter": "SIMPLE_VIEW",
				"model": mkey("part", 1)}, &ex); err != nil || !ex.Success {
				t.Fatalf("export: %v %+v", err, ex.Error)
			}
			var env struct {
				CurrentState string                     `json:"currentState"`
				Model        map[string]json.RawMessage `json:"model"`
			}
			if err := json.Unmarshal(ex.Payload, &env); err != nil || env.CurrentState != "LOCKED" || env.Model["$"] == nil {
				t.Fatalf("export payload %s: %v", ex.Payload, err)
			}
			if _, err := uuid.Parse(ex.ModelID); err != nil || ex.Model.Name != "part" {
				t.Fatalf("export ids: %+v", ex)
			}

			var all wire.ModelGetAllResponse
			if _, err := e.call(e.tokA, "model", wire.TypeModelGetAllRequest, obj{"id": "g"}, &all); err != nil || !all.Success ||
				len(all.Models) != 1 || all.Models[0].Name != "part" || all.Models[0].State != "LOCKED" || all.Models[0].Version != 1 {
				t.Fatalf("get all: %v %+v", err, all)
			}
			// Tenant B sees none of A's models.
			if _, err := e.call(e.tokB, "model", wire.TypeModelGetAllRequest, obj{"id": "g"}, &all); err != nil || len(all.Models) != 0 {
				t.Fatalf("tenant B lists %+v (%v)", all.Models, err)
			}

			var imp wire.ModelImportResponse
			if _, err := e.call(e.tokA, "model", wire.TypeModelImportRequest, obj{"id": "i", "model": mkey("part", 1),
				"payload": obj{"extra": true}}, &imp); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, imp.Base, "MODEL_ALREADY_LOCKED")
			if imp.ModelID == "" {
				t.Fatal("failure response without modelId")
			}
			var del wire.Base
			if _, err := e.call(e.tokA, "model", wire.TypeModelDeleteRequest, obj{"id": "d", "model": mkey("part", 1)}, &del); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, del, "MODEL_ALREADY_LOCKED")

			var tr wire.ModelTransitionResponse
			if _, err := e.call(e.tokA, "model", wire.TypeModelTransitionRequest, obj{"id": "u", "model": mkey("part", 1),
				"transition": "UNLOCK"}, &tr); err != nil || !tr.Success || tr.State != "UNLOCKED" {
				t.Fatalf("unlock: %v %+v", err, tr)
			}
			if _, err := e.call(e.tokA, "model", wire.TypeModelDeleteRequest, obj{"id": "d", "model": mkey("part", 1)}, &del); err != nil || !del.Success {
				t.Fatalf("delete: %v %+v", err, del)
			}
			if _, err := e.call(e.tokA, "model", wire.TypeModelExportRequest, obj{"id": "x", "model": mkey("part", 1)}, &ex); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, ex.Base, "MODEL_NOT_FOUND")

			_, err := e.call(e.tokA, "model", wire.TypeModelTransitionRequest, obj{"id": "u", "model": mkey("part", 1), "transition": "FREEZE"}, &tr)
			wantStatus(t, err, codes.InvalidArgument)
			_, err = e.call(e.tokA, "model", wire.TypeEntityGetRequest, obj{"id": "u"}, &tr)
			wantStatus(t, err, codes.InvalidArgument)
		})
	}
}

// TestEntityManageRPC covers the entityManage request types: create
// (object and array), update, patch, transition and delete, with reads
// through entitySearch and entityManage (routing by type).
func TestEntityManageRPC(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newCrudEnv(t, backend, envOptions{})
			e.lockedModel(e.tokA, "part")
			id, tx := e.create(e.tokA, "part", obj{"name": "bolt", "price": 1.5, "qty": 10, "tags": []string{"m"}})

			var arr wire.TransactionResponse
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityCreateRequest, obj{"id": "c", "dataFormat": "JSON",
				"payload": obj{"model": mkey("part", 1), "data": []obj{{"name": "a", "qty": 1}, {"name": "b", "qty": 2}}}}, &arr); err != nil ||
				!arr.Success || len(arr.TransactionInfo.EntityIDs) != 2 || arr.RequestID != "req-EntityCreateRequest" {
				t.Fatalf("array create: %v %+v", err, arr)
			}

			for _, rpc := range []string{"search", "manage"} {
				var got wire.EntityResponse
				typ, err := e.call(e.tokA, rpc, wire.TypeEntityGetRequest, obj{"id": "g", "entityId": id}, &got)
				if err != nil || typ != wire.TypeEntityResponse || !got.Success || got.Payload.Meta == nil ||
					got.Payload.Meta.ID != id || got.Payload.Meta.State != "CREATED" || got.Payload.Meta.TransactionID != tx ||
					got.Payload.Meta.ModelKey.Name != "part" || !strings.Contains(string(got.Payload.Data), `"bolt"`) {
					t.Fatalf("get on %s: %v %s %+v", rpc, err, typ, got)
				}
			}

			var up wire.TransactionResponse
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityUpdateRequest, obj{"id": "u", "dataFormat": "JSON",
				"payload": obj{"entityId": id, "data": obj{"name": "bolt", "price": 2.5, "qty": 9}}}, &up); err != nil || !up.Success ||
				up.TransactionInfo.TransactionID == tx || up.TransactionInfo.EntityIDs[0] != id {
				t.Fatalf("update: %v %+v", err, up)
			}
			// A stale ifMatch is the domain's 412.
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityUpdateRequest, obj{"id": "u",
				"payload": obj{"entityId": id, "data": obj{"name": "x"}, "ifMatch": tx}}, &up); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, up.Base, "ENTITY_MODIFIED")

			var pt wire.TransactionResponse
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityPatchRequest, obj{"id": "p", "patchFormat": "MERGE_PATCH",
				"payload": obj{"entityId": id, "patch": obj{"qty": 7}}}, &pt); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, pt.Base, "PRECONDITION_REQUIRED")
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityPatchRequest, obj{"id": "p", "patchFormat": "MERGE_PATCH",
				"payload": obj{"entityId": id, "patch": obj{"qty": 7}, "ifMatch": "*"}}, &pt); err != nil || !pt.Success {
				t.Fatalf("patch: %v %+v", err, pt)
			}
			got, err := e.ents.Get(context.Background(), "tenant-a", uuid.MustParse(id), nil, nil)
			if err != nil || !strings.Contains(string(got.Data), `"qty":7`) || !strings.Contains(string(got.Data), `"price":2.5`) {
				t.Fatalf("after patch: %s %v", got.Data, err)
			}

			var trn wire.TransitionResponse
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityTransitionRequest, obj{"id": "t", "entityId": id, "transition": "NOPE"}, &trn); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, trn.Base, "TRANSITION_NOT_FOUND")
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityTransitionRequest, obj{"id": "t", "entityId": id, "transition": "DELETE"}, &trn); err != nil || !trn.Success {
				t.Fatalf("transition: %v %+v", err, trn)
			}
			got, _ = e.ents.Get(context.Background(), "tenant-a", uuid.MustParse(id), nil, nil)
			if got.State != "DELETED" || got.Transition != "DELETE" || !strings.Contains(string(got.Data), `"qty":7`) {
				t.Fatalf("after transition: state %s via %s, %s", got.State, got.Transition, got.Data)
			}

			var del wire.DeleteResponse
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityDeleteRequest, obj{"id": "d", "entityId": id}, &del); err != nil ||
				!del.Success || del.EntityID != id || del.Model.Name != "part" || del.Model.Version != 1 || del.TransactionID == "" {
				t.Fatalf("delete: %v %+v", err, del)
			}
			var gone wire.EntityResponse
			if _, err := e.call(e.tokA, "search", wire.TypeEntityGetRequest, obj{"id": "g", "entityId": id}, &gone); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, gone.Base, "ENTITY_NOT_FOUND")
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityDeleteRequest, obj{"id": "d", "entityId": id}, &del); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, del.Base, "ENTITY_NOT_FOUND")

			// Creates need a LOCKED model: a domain failure, not a gRPC error.
			var cr wire.TransactionResponse
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityCreateRequest, obj{"id": "c",
				"payload": obj{"model": mkey("nope", 1), "data": obj{"a": 1}}}, &cr); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, cr.Base, "MODEL_NOT_FOUND")
			if cr.TransactionInfo.EntityIDs == nil || len(cr.TransactionInfo.EntityIDs) != 0 || cr.RequestID != "req-EntityCreateRequest" {
				t.Fatalf("failure shape: %+v", cr)
			}
		})
	}
}

// TestEntityManageCollectionRPC covers entityManageCollection: a
// collection create is one transaction, a collection update one per item
// reporting the last, delete-all, and the empty-payloads rule.
func TestEntityManageCollectionRPC(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newCrudEnv(t, backend, envOptions{})
			e.lockedModel(e.tokA, "part")
			e.lockedModel(e.tokA, "tool")
			items := []obj{}
			for i := range 5 {
				name := "part"
				if i%2 == 1 {
					name = "tool"
				}
				items = append(items, obj{"model": mkey(name, 1), "data": obj{"name": fmt.Sprint("n", i), "qty": i}})
			}
			evs, err := e.stream(e.tokA, "manageCollection", wire.TypeEntityCreateCollectionRequest, obj{"id": "cc", "dataFormat": "JSON", "payloads": items})
			if err != nil || len(evs) != 1 {
				t.Fatalf("collection create: %v, %d events", err, len(evs))
			}
			cr := decode[wire.TransactionResponse](t, evs[0])
			if !cr.Success || len(cr.TransactionInfo.EntityIDs) != 5 {
				t.Fatalf("collection create: %+v", cr)
			}
			for _, id := range cr.TransactionInfo.EntityIDs {
				got, err := e.ents.Get(context.Background(), "tenant-a", uuid.MustParse(id), nil, nil)
				if err != nil || uuid.UUID(got.TxID).String() != cr.TransactionInfo.TransactionID {
					t.Fatalf("entity %s not in the one transaction: %v", id, err)
				}
			}
			// One bad item fails the whole collection: nothing is written.
			bad := append([]obj{}, items[:2]...)
			bad = append(bad, obj{"model": mkey("part", 1), "data": []int{1}})
			evs, err = e.stream(e.tokA, "manageCollection", wire.TypeEntityCreateCollectionRequest, obj{"id": "cc", "payloads": bad})
			if err != nil || len(evs) != 1 {
				t.Fatal(err)
			}
			wantClientError(t, decode[wire.TransactionResponse](t, evs[0]).Base, "BAD_REQUEST")
			if n, _ := e.ents.CountForModel(context.Background(), "tenant-a", storage.ModelKey{Name: "part", Version: 1}, nil); n.Count != 3 {
				t.Fatalf("failed collection wrote entities: %d", n.Count)
			}
			for _, typ := range []string{wire.TypeEntityCreateCollectionRequest, wire.TypeEntityUpdateCollectionRequest} {
				_, err = e.stream(e.tokA, "manageCollection", typ, obj{"id": "cc", "payloads": []obj{}})
				wantStatus(t, err, codes.InvalidArgument)
			}

			ups := []obj{}
			for i, id := range cr.TransactionInfo.EntityIDs[:3] {
				ups = append(ups, obj{"entityId": id, "data": obj{"name": "upd", "qty": 100 + i}})
			}
			evs, err = e.stream(e.tokA, "manageCollection", wire.TypeEntityUpdateCollectionRequest, obj{"id": "uc", "dataFormat": "JSON", "payloads": ups})
			if err != nil || len(evs) != 1 {
				t.Fatal(err)
			}
			uc := decode[wire.TransactionResponse](t, evs[0])
			if !uc.Success || len(uc.TransactionInfo.EntityIDs) != 3 {
				t.Fatalf("collection update: %+v", uc)
			}
			txs := map[string]bool{}
			for _, id := range uc.TransactionInfo.EntityIDs {
				got, _ := e.ents.Get(context.Background(), "tenant-a", uuid.MustParse(id), nil, nil)
				txs[uuid.UUID(got.TxID).String()] = true
			}
			last, _ := e.ents.Get(context.Background(), "tenant-a", uuid.MustParse(uc.TransactionInfo.EntityIDs[2]), nil, nil)
			if len(txs) != 3 || uuid.UUID(last.TxID).String() != uc.TransactionInfo.TransactionID {
				t.Fatalf("want one transaction per item, the last reported: %v, reported %s", txs, uc.TransactionInfo.TransactionID)
			}

			// The first failing item ends the request; items before it stay
			// committed (one transaction each).
			evs, err = e.stream(e.tokA, "manageCollection", wire.TypeEntityUpdateCollectionRequest, obj{"id": "uc", "payloads": []obj{
				{"entityId": cr.TransactionInfo.EntityIDs[3], "data": obj{"name": "kept", "qty": 1}},
				{"entityId": uuid.NewString(), "data": obj{"name": "ghost", "qty": 1}},
				{"entityId": cr.TransactionInfo.EntityIDs[4], "data": obj{"name": "never", "qty": 1}},
			}})
			if err != nil || len(evs) != 1 {
				t.Fatal(err)
			}
			if f := decode[wire.TransactionResponse](t, evs[0]); f.Error == nil || !strings.HasPrefix(f.Error.Message, "ENTITY_NOT_FOUND: item 1: ") {
				t.Fatalf("mid-way failure: %+v", f.Error)
			} else {
				wantClientError(t, f.Base, "ENTITY_NOT_FOUND")
			}
			kept, _ := e.ents.Get(context.Background(), "tenant-a", uuid.MustParse(cr.TransactionInfo.EntityIDs[3]), nil, nil)
			never, _ := e.ents.Get(context.Background(), "tenant-a", uuid.MustParse(cr.TransactionInfo.EntityIDs[4]), nil, nil)
			if !strings.Contains(string(kept.Data), "kept") || strings.Contains(string(never.Data), "never") {
				t.Fatalf("after a mid-way failure: %s / %s", kept.Data, never.Data)
			}

			evs, err = e.stream(e.tokA, "manageCollection", wire.TypeEntityDeleteAllRequest, obj{"id": "da", "model": mkey("tool", 1)})
			if err != nil || len(evs) != 1 {
				t.Fatal(err)
			}
			da := decode[wire.DeleteAllResponse](t, evs[0])
			if !da.Success || da.NumDeleted != 2 || da.EntityIDs == nil || da.ModelID == "" {
				t.Fatalf("delete all: %+v", da)
			}
			// A page of the list, numbered from 1 on entityManageCollection.
			evs, err = e.stream(e.tokA, "manageCollection", wire.TypeEntityGetAllRequest, obj{"id": "ga", "model": mkey("part", 1), "pageSize": 2, "pageNumber": 1})
			if err != nil || len(evs) != 2 {
				t.Fatalf("get all page 1: %v, %d", err, len(evs))
			}
		})
	}
}

// TestEntitySearchRPCs covers the read types: list pages, direct search
// (streamed, ordered, limited), change history, stats and stats by state,
// and the snapshot search cycle.
func TestEntitySearchRPCs(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newCrudEnv(t, backend, envOptions{})
			e.lockedModel(e.tokA, "part")
			var ids []string
			for i := range 6 {
				id, _ := e.create(e.tokA, "part", obj{"name": fmt.Sprint("p", i), "qty": i, "price": float64(i) + 0.5})
				ids = append(ids, id)
			}

			evs, err := e.stream(e.tokA, "searchCollection", wire.TypeEntityGetAllRequest, obj{"id": "ga", "model": mkey("part", 1), "pageSize": 4, "pageNumber": 1})
			if err != nil || len(evs) != 2 {
				t.Fatalf("get all page 1 (from 0): %v, %d events", err, len(evs))
			}
			for _, ev := range evs {
				if r := decode[wire.EntityResponse](t, ev); ev.GetType() != wire.TypeEntityResponse || !r.Success || r.Payload.Meta == nil {
					t.Fatalf("list event: %s %+v", ev.GetType(), r)
				}
			}

			cond := obj{"type": "simple", "jsonPath": "$.qty", "operatorType": "GREATER_OR_EQUAL", "value": 2}
			evs, err = e.stream(e.tokA, "searchCollection", wire.TypeEntitySearchRequest, obj{"id": "s", "model": mkey("part", 1),
				"condition": cond, "orderBy": []obj{{"path": "qty", "desc": true}}})
			if err != nil || len(evs) != 4 {
				t.Fatalf("search: %v, %d events", err, len(evs))
			}
			var names []string
			for _, ev := range evs {
				var d struct{ Name string }
				json.Unmarshal(decode[wire.EntityResponse](t, ev).Payload.Data, &d)
				names = append(names, d.Name)
			}
			if strings.Join(names, ",") != "p5,p4,p3,p2" {
				t.Fatalf("search order: %v", names)
			}
			evs, err = e.stream(e.tokA, "searchCollection", wire.TypeEntitySearchRequest, obj{"id": "s", "model": mkey("part", 1), "condition": cond, "limit": 2})
			if err != nil || len(evs) != 1 {
				t.Fatalf("limited search: %v %d", err, len(evs))
			}
			wantClientError(t, decode[wire.EntityResponse](t, evs[0]).Base, "SEARCH_RESULT_LIMIT")
			evs, err = e.stream(e.tokA, "searchCollection", wire.TypeEntitySearchRequest, obj{"id": "s", "model": mkey("part", 1),
				"condition": obj{"type": "simple", "jsonPath": "qty", "operatorType": "EQUALS", "value": 1}})
			if err != nil || len(evs) != 1 {
				t.Fatal(err)
			}
			wantClientError(t, decode[wire.EntityResponse](t, evs[0]).Base, "INVALID_FIELD_PATH")
			_, err = e.call(e.tokA, "search", wire.TypeEntitySearchRequest, obj{"id": "s", "model": mkey("part", 1), "condition": cond}, &wire.EntityResponse{})
			wantStatus(t, err, codes.InvalidArgument)

			var up wire.TransactionResponse
			e.call(e.tokA, "manage", wire.TypeEntityUpdateRequest, obj{"id": "u", "payload": obj{"entityId": ids[0], "data": obj{"name": "p0", "qty": 50}}}, &up)
			evs, err = e.stream(e.tokA, "searchCollection", wire.TypeEntityChangesMetadataGetRequest, obj{"id": "ch", "entityId": ids[0]})
			if err != nil || len(evs) != 2 {
				t.Fatalf("changes: %v %d", err, len(evs))
			}
			first := decode[wire.ChangesResponse](t, evs[0])
			if first.ChangeMeta.ChangeType != "UPDATE" || first.ChangeMeta.TransactionID != up.TransactionInfo.TransactionID ||
				first.ChangeMeta.User != "svc-a" || decode[wire.ChangesResponse](t, evs[1]).ChangeMeta.ChangeType != "CREATE" {
				t.Fatalf("changes: %+v", first)
			}
			// attributedKind and executedBy, as over HTTP (issue 13 item 4).
			if m := first.ChangeMeta; m.AttributedKind != "user" || m.ExecutedBy == nil || *m.ExecutedBy != (wire.Principal{ID: "svc-a", Kind: "user"}) {
				t.Fatalf("changes attribution: %s", evs[0].GetTextData())
			}

			evs, err = e.stream(e.tokA, "searchCollection", wire.TypeEntityStatsGetRequest, obj{"id": "st", "model": mkey("part", 1)})
			if err != nil || len(evs) != 1 {
				t.Fatal(err)
			}
			if st := decode[wire.StatsResponse](t, evs[0]); st.Count != 6 || st.ModelName != "part" || st.ModelVersion != 1 {
				t.Fatalf("stats: %+v", st)
			}
			e.call(e.tokA, "manage", wire.TypeEntityTransitionRequest, obj{"id": "t", "entityId": ids[1], "transition": "DELETE"}, &wire.TransitionResponse{})
			evs, err = e.stream(e.tokA, "searchCollection", wire.TypeEntityStatsByStateGetRequest, obj{"id": "sb", "model": mkey("part", 1)})
			if err != nil || len(evs) != 2 {
				t.Fatalf("stats by state: %v %d", err, len(evs))
			}
			byState := map[string]int64{}
			for _, ev := range evs {
				r := decode[wire.StatsByStateResponse](t, ev)
				byState[r.State] = r.Count
			}
			if byState["CREATED"] != 5 || byState["DELETED"] != 1 {
				t.Fatalf("stats by state: %v", byState)
			}

			// Snapshot search: submit, poll, page.
			var sub wire.SnapshotResponse
			if _, err := e.call(e.tokA, "search", wire.TypeEntitySnapshotSearchRequest, obj{"id": "ss", "model": mkey("part", 1), "condition": cond}, &sub); err != nil || !sub.Success {
				t.Fatalf("snapshot submit: %v %+v", err, sub)
			}
			await.Value(t, await.Long, func() (any, bool) {
				if sub.Status.Status == storage.JobSuccessful {
					return sub.Status, true
				}
				if _, err := e.call(e.tokA, "search", wire.TypeSnapshotGetStatusRequest, obj{"id": "sg", "snapshotId": sub.Status.SnapshotID}, &sub); err != nil || !sub.Success {
					t.Fatalf("snapshot status: %v %+v", err, sub)
				}
				return sub.Status, sub.Status.Status == storage.JobSuccessful
			}, "snapshot done")
			evs, err = e.stream(e.tokA, "searchCollection", wire.TypeSnapshotGetRequest, obj{"id": "sp", "snapshotId": sub.Status.SnapshotID, "pageSize": 3})
			if err != nil || len(evs) != 3 || sub.Status.EntitiesCount == nil || *sub.Status.EntitiesCount != 5 { // p0 was updated to qty 50
				t.Fatalf("snapshot page: %v %d %+v", err, len(evs), sub.Status)
			}
			if _, err := e.call(e.tokB, "search", wire.TypeSnapshotGetStatusRequest, obj{"id": "sg", "snapshotId": sub.Status.SnapshotID}, &sub); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, sub.Base, "SEARCH_JOB_NOT_FOUND")
		})
	}
}

// TestCrudRPCTenantIsolation: a member acts in its token's tenant only; a
// member of tenant B can neither read nor change tenant A's entities.
func TestCrudRPCTenantIsolation(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newCrudEnv(t, backend, envOptions{})
			e.lockedModel(e.tokA, "part")
			id, _ := e.create(e.tokA, "part", obj{"name": "secret", "qty": 1})

			var got wire.EntityResponse
			if _, err := e.call(e.tokB, "search", wire.TypeEntityGetRequest, obj{"id": "g", "entityId": id}, &got); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, got.Base, "ENTITY_NOT_FOUND")
			if len(got.Payload.Data) != 0 {
				t.Fatalf("B got data %s", got.Payload.Data)
			}
			var up wire.TransactionResponse
			if _, err := e.call(e.tokB, "manage", wire.TypeEntityUpdateRequest, obj{"id": "u", "payload": obj{"entityId": id, "data": obj{"name": "pwned"}}}, &up); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, up.Base, "ENTITY_NOT_FOUND")
			var del wire.DeleteResponse
			if _, err := e.call(e.tokB, "manage", wire.TypeEntityDeleteRequest, obj{"id": "d", "entityId": id}, &del); err != nil {
				t.Fatal(err)
			}
			wantClientError(t, del.Base, "ENTITY_NOT_FOUND")
			evs, err := e.stream(e.tokB, "searchCollection", wire.TypeEntityGetAllRequest, obj{"id": "ga", "model": mkey("part", 1)})
			if err != nil || len(evs) != 1 {
				t.Fatal(err)
			}
			wantClientError(t, decode[wire.EntityResponse](t, evs[0]).Base, "MODEL_NOT_FOUND")
			evs, err = e.stream(e.tokB, "searchCollection", wire.TypeEntityChangesMetadataGetRequest, obj{"id": "ch", "entityId": id})
			if err != nil || len(evs) != 1 {
				t.Fatal(err)
			}
			wantClientError(t, decode[wire.ChangesResponse](t, evs[0]).Base, "ENTITY_NOT_FOUND")
			evs, err = e.stream(e.tokB, "searchCollection", wire.TypeEntityStatsGetRequest, obj{"id": "st"})
			if err != nil || len(evs) != 0 {
				t.Fatalf("B's stats: %v %d events", err, len(evs))
			}
			// B's own model of the same name is a different model.
			e.lockedModel(e.tokB, "part")
			evs, err = e.stream(e.tokB, "searchCollection", wire.TypeEntitySearchRequest, obj{"id": "s", "model": mkey("part", 1),
				"condition": obj{"type": "group", "operator": "AND", "conditions": []obj{}}})
			if err != nil || len(evs) != 0 {
				t.Fatalf("B's search found %d of A's entities (%v)", len(evs), err)
			}
			a, _ := e.ents.Get(context.Background(), "tenant-a", uuid.MustParse(id), nil, nil)
			if a == nil || !strings.Contains(string(a.Data), "secret") {
				t.Fatal("A's entity changed")
			}
		})
	}
}

// TestCrudRPCErrors covers the gRPC-level rejections and the error shapes:
// authentication, ROLE_M2M, malformed envelopes and payloads, unsupported
// types, streaming types on unary RPCs, tx-token, and 5xx failures that
// show only a ticket.
func TestCrudRPCErrors(t *testing.T) {
	leak := errors.New("pq: connection to 10.0.0.7 refused (secret detail)")
	e := newCrudEnv(t, "memory", envOptions{wrapEntities: func(real crud.Entities) crud.Entities {
		return failingGet{Entities: real, err: leak}
	}})
	get := obj{"id": "g", "entityId": uuid.NewString()}

	_, err := e.call("", "search", wire.TypeEntityGetRequest, get, &wire.EntityResponse{})
	wantStatus(t, err, codes.Unauthenticated)
	_, err = e.call(e.tokA[:len(e.tokA)-4]+"AAAA", "search", wire.TypeEntityGetRequest, get, &wire.EntityResponse{})
	wantStatus(t, err, codes.Unauthenticated)
	for _, rpc := range []string{"search", "manage", "model"} {
		_, err = e.call(e.tokUser, rpc, wire.TypeEntityGetRequest, get, &wire.EntityResponse{})
		wantStatus(t, err, codes.PermissionDenied)
	}
	_, err = e.stream(e.tokUser, "searchCollection", wire.TypeEntitySearchRequest, obj{"id": "s"})
	wantStatus(t, err, codes.PermissionDenied)

	ctx := authCtx(e.tokA)
	for name, ev := range map[string]*ce.CloudEvent{
		"unknown type":  event("x", "EntityTeleportRequest", get),
		"proto data":    {Id: "x", Type: wire.TypeEntityGetRequest, Data: &ce.CloudEvent_ProtoData{}},
		"no data":       {Id: "x", Type: wire.TypeEntityGetRequest},
		"not json":      {Id: "x", Type: wire.TypeEntityGetRequest, Data: &ce.CloudEvent_TextData{TextData: `{"entityId":`}},
		"json array":    {Id: "x", Type: wire.TypeEntityGetRequest, Data: &ce.CloudEvent_BinaryData{BinaryData: []byte(`[1]`)}},
		"bad entity id": event("x", wire.TypeEntityGetRequest, obj{"entityId": "nope"}),
		"bad instant":   event("x", wire.TypeEntityGetRequest, obj{"entityId": uuid.NewString(), "pointInTime": "yesterday"}),
		"stream type":   event("x", wire.TypeEntityGetAllRequest, obj{"model": mkey("part", 1)}),
		"model type":    event("x", wire.TypeModelGetAllRequest, obj{}),
		"no payload":    event("x", wire.TypeEntityCreateRequest, obj{"dataFormat": "JSON"}),
		"no model":      event("x", wire.TypeEntityCreateRequest, obj{"payload": obj{"data": obj{}}}),
		"bad format":    event("x", wire.TypeEntityUpdateRequest, obj{"dataFormat": "YAML", "payload": obj{"entityId": uuid.NewString(), "data": obj{}}}),
		"bad patch fmt": event("x", wire.TypeEntityPatchRequest, obj{"patchFormat": "DIFF", "payload": obj{"entityId": uuid.NewString(), "patch": obj{}}}),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.client.EntitySearch(ctx, ev)
			wantStatus(t, err, codes.InvalidArgument)
		})
	}

	// An entity service that cannot join transactions (this wrapper is
	// not a Joiner): a clear Unimplemented, never a silent run outside the
	// caller's transaction.
	_, err = e.client.EntityManage(authCtx(e.tokA, "tx-token", "abc.def"), event("x", wire.TypeEntityGetRequest, get))
	if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "tx-token") {
		t.Fatalf("tx-token: %v", err)
	}

	// An internal failure shows a ticket and nothing of its cause.
	var r wire.EntityResponse
	if _, err := e.call(e.tokA, "search", wire.TypeEntityGetRequest, get, &r); err != nil {
		t.Fatal(err)
	}
	if r.Success || r.Error == nil || r.Error.Code != "SERVER_ERROR" ||
		!regexp.MustCompile(`^SERVER_ERROR: internal error \[ticket: [0-9a-f-]{36}\]$`).MatchString(r.Error.Message) ||
		strings.Contains(r.Error.Message, "10.0.0.7") || r.RequestID != "req-EntityGetRequest" {
		t.Fatalf("5xx shape: %+v", r.Error)
	}
	// A 5xx catalogue error keeps its client-facing text and retryability.
	e.lockedModel(e.tokA, "part")
	var p wire.TransactionResponse
	if _, err := e.call(e.tokA, "manage", wire.TypeEntityPatchRequest, obj{"id": "p", "patchFormat": "JSON_PATCH",
		"payload": obj{"entityId": uuid.NewString(), "patch": []obj{}, "ifMatch": "*"}}, &p); err != nil {
		t.Fatal(err)
	}
	if p.Error == nil || p.Error.Code != "SERVER_ERROR" || !strings.HasPrefix(p.Error.Message, "NOT_IMPLEMENTED: ") {
		t.Fatalf("501 shape: %+v", p.Error)
	}
}

// failingGet is the real entity service whose reads fail with an
// infrastructure error, to see what a 5xx looks like on the wire.
type failingGet struct {
	crud.Entities
	err error
}

func (f failingGet) Get(context.Context, string, [16]byte, *time.Time, *[16]byte) (*storage.Entity, error) {
	return nil, f.err
}
