package crud_test

import (
	"testing"

	"svc/compute/wire"
)

// BenchmarkCrudEntityCreate is one entityManage EntityCreateRequest over
// loopback gRPC with a real RS256 token (verified once, then cached):
// envelope, auth, payload decode, admission, commit, response.
func BenchmarkCrudEntityCreate(b *testing.B) {
	for _, backend := range backends {
		b.Run(backend, func(b *testing.B) {
			e := newCrudEnv(b, backend, envOptions{})
			e.lockedModel(e.tokA, "part")
			ev := event("bench", wire.TypeEntityCreateRequest, obj{"id": "bench", "dataFormat": "JSON",
				"payload": obj{"model": mkey("part", 1), "data": obj{"name": "widget", "price": 12.5, "qty": 3, "tags": []string{"a"}}}})
			ctx := authCtx(e.tokA)
			b.ReportAllocs()
			for b.Loop() {
				r, err := e.client.EntityManage(ctx, ev)
				if err != nil || r.GetType() != wire.TypeEntityTransactionResponse {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCrudEntityGet is one entitySearch EntityGetRequest over
// loopback gRPC.
func BenchmarkCrudEntityGet(b *testing.B) {
	for _, backend := range backends {
		b.Run(backend, func(b *testing.B) {
			e := newCrudEnv(b, backend, envOptions{})
			e.lockedModel(e.tokA, "part")
			id, _ := e.create(e.tokA, "part", obj{"name": "widget", "price": 12.5, "qty": 3, "tags": []string{"a"}})
			ev := event("bench", wire.TypeEntityGetRequest, obj{"id": "bench", "entityId": id})
			ctx := authCtx(e.tokA)
			b.ReportAllocs()
			for b.Loop() {
				r, err := e.client.EntitySearch(ctx, ev)
				if err != nil || r.GetType() != wire.TypeEntityResponse {
					b.Fatal(err)
				}
			}
		})
	}
}
