package crud_test

import (
	"strings"
	"testing"
	"time"

	"svc/compute/wire"
)

// TestJavaTemplateReadBack (docs/decisions/0030-client-compatibility.md, docs/decisions/0014-entities.md): the Cloud-era Java template writes over entityManage, reads
// the change history, picks the entry of its transaction and re-reads the
// entity at that entry's timeOfChange truncated to milliseconds (a
// java.util.Date, written with a +00:00 offset), with EntityGetRequest on
// entityManage and EntityGetAllRequest on entityManageCollection (pages
// from 1 there). Each read must return exactly the revision that
// transaction wrote, on both engines.
func TestJavaTemplateReadBack(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newCrudEnv(t, backend, envOptions{})
			e.lockedModel(e.tokA, "part")
			id, tx1 := e.create(e.tokA, "part", obj{"name": "bolt", "price": 1.5, "qty": 10, "tags": []string{"m"}})
			// Two revisions in one millisecond are one instant to a
			// millisecond reader (docs/decisions/0014-entities.md); the template's writes are
			// round trips apart.
			time.Sleep(2 * time.Millisecond)
			var up wire.TransactionResponse
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityUpdateRequest, obj{"id": "u", "dataFormat": "JSON",
				"payload": obj{"entityId": id, "data": obj{"name": "bolt", "price": 2.5, "qty": 9, "tags": []string{"m"}}}}, &up); err != nil || !up.Success {
				t.Fatalf("update: %v %+v", err, up)
			}
			tx2 := up.TransactionInfo.TransactionID

			evs, err := e.stream(e.tokA, "searchCollection", wire.TypeEntityChangesMetadataGetRequest, obj{"id": "ch", "entityId": id})
			if err != nil || len(evs) != 2 {
				t.Fatalf("changes: %v %d", err, len(evs))
			}
			javaTime := map[string]string{}
			for _, ev := range evs {
				m := decode[wire.ChangesResponse](t, ev).ChangeMeta
				at, err := time.Parse(time.RFC3339Nano, m.TimeOfChange)
				if err != nil {
					t.Fatal(err)
				}
				javaTime[m.TransactionID] = at.Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000") + "+00:00"
			}
			for tx, want := range map[string]string{tx1: `"qty":10`, tx2: `"qty":9`} {
				var got wire.EntityResponse
				if _, err := e.call(e.tokA, "manage", wire.TypeEntityGetRequest, obj{"id": "g", "entityId": id, "pointInTime": javaTime[tx]}, &got); err != nil ||
					!got.Success || got.Payload.Meta == nil || got.Payload.Meta.TransactionID != tx || !strings.Contains(string(got.Payload.Data), want) {
					t.Fatalf("read-back of %s at %s: %v %+v", tx, javaTime[tx], err, got)
				}
				page, err := e.stream(e.tokA, "manageCollection", wire.TypeEntityGetAllRequest,
					obj{"id": "ga", "model": mkey("part", 1), "pageSize": 10, "pageNumber": 1, "pointInTime": javaTime[tx]})
				if err != nil || len(page) != 1 {
					t.Fatalf("list at %s: %v %d", javaTime[tx], err, len(page))
				}
				if r := decode[wire.EntityResponse](t, page[0]); r.Payload.Meta == nil || r.Payload.Meta.TransactionID != tx {
					t.Fatalf("list at %s: %s", javaTime[tx], page[0].GetTextData())
				}
			}
			// Page 2 of one entity is empty on entityManageCollection (from
			// 1) while page 0 of entitySearchCollection is the first.
			if page, err := e.stream(e.tokA, "manageCollection", wire.TypeEntityGetAllRequest,
				obj{"id": "ga", "model": mkey("part", 1), "pageSize": 1, "pageNumber": 2}); err != nil || len(page) != 0 {
				t.Fatalf("manageCollection page 2: %v %d", err, len(page))
			}
			if page, err := e.stream(e.tokA, "searchCollection", wire.TypeEntityGetAllRequest,
				obj{"id": "ga", "model": mkey("part", 1), "pageSize": 1, "pageNumber": 0}); err != nil || len(page) != 1 {
				t.Fatalf("searchCollection page 0: %v %d", err, len(page))
			}
		})
	}
}

// TestJavaTemplateCollectionParams (docs/decisions/0030-client-compatibility.md): the Java templates send transactionWindow and
// transactionTimeoutMs on collection creates and updates (and null
// transitions in updates); they are accepted and every item is written.
// A single EntityUpdateRequest with "transition": null is a loopback.
func TestJavaTemplateCollectionParams(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			e := newCrudEnv(t, backend, envOptions{})
			e.lockedModel(e.tokA, "part")
			items := []obj{}
			for i := range 3 {
				items = append(items, obj{"model": mkey("part", 1), "data": obj{"name": "p", "qty": i, "price": 1.5, "tags": []string{"m"}}})
			}
			evs, err := e.stream(e.tokA, "manageCollection", wire.TypeEntityCreateCollectionRequest,
				obj{"id": "cc", "dataFormat": "JSON", "transactionWindow": 2, "transactionTimeoutMs": 20000, "payloads": items})
			if err != nil || len(evs) == 0 {
				t.Fatalf("collection create: %v %d", err, len(evs))
			}
			cr := decode[wire.TransactionResponse](t, evs[0])
			if !cr.Success || len(cr.TransactionInfo.EntityIDs) != 3 {
				t.Fatalf("collection create: %s", evs[0].GetTextData())
			}
			ups := []obj{}
			for _, id := range cr.TransactionInfo.EntityIDs {
				ups = append(ups, obj{"entityId": id, "data": obj{"name": "q", "qty": 7, "price": 1.5, "tags": []string{"m"}}, "transition": nil})
			}
			evs, err = e.stream(e.tokA, "manageCollection", wire.TypeEntityUpdateCollectionRequest,
				obj{"id": "uc", "dataFormat": "JSON", "transactionWindow": 100, "transactionTimeoutMs": 20000, "payloads": ups})
			if err != nil || len(evs) == 0 {
				t.Fatalf("collection update: %v %d", err, len(evs))
			}
			if uc := decode[wire.TransactionResponse](t, evs[0]); !uc.Success || len(uc.TransactionInfo.EntityIDs) != 3 {
				t.Fatalf("collection update: %s", evs[0].GetTextData())
			}
			for _, id := range cr.TransactionInfo.EntityIDs {
				var got wire.EntityResponse
				if _, err := e.call(e.tokA, "search", wire.TypeEntityGetRequest, obj{"id": "g", "entityId": id}, &got); err != nil ||
					!strings.Contains(string(got.Payload.Data), `"qty":7`) {
					t.Fatalf("%s after the update: %v %s", id, err, got.Payload.Data)
				}
			}
			id := cr.TransactionInfo.EntityIDs[0]
			var before, after wire.EntityResponse
			e.call(e.tokA, "search", wire.TypeEntityGetRequest, obj{"id": "g", "entityId": id}, &before)
			var up wire.TransactionResponse
			if _, err := e.call(e.tokA, "manage", wire.TypeEntityUpdateRequest, obj{"id": "u", "dataFormat": "JSON",
				"payload": obj{"entityId": id, "data": obj{"name": "r", "qty": 8, "price": 1.5, "tags": []string{"m"}}, "transition": nil}}, &up); err != nil || !up.Success {
				t.Fatalf("update with a null transition: %v %+v", err, up)
			}
			if _, err := e.call(e.tokA, "search", wire.TypeEntityGetRequest, obj{"id": "g", "entityId": id}, &after); err != nil ||
				!strings.Contains(string(after.Payload.Data), `"qty":8`) || after.Payload.Meta.State != before.Payload.Meta.State ||
				after.Payload.Meta.TransactionID != up.TransactionInfo.TransactionID {
				t.Fatalf("after a null-transition update: %v %s %+v (state before %q)", err, after.Payload.Data, after.Payload.Meta, before.Payload.Meta.State)
			}
		})
	}
}
