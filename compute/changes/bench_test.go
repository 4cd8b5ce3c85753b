package changes_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"google.golang.org/protobuf/proto"

	"svc/changefeed"
	"svc/compute/changes"
	"svc/compute/wire"
	"svc/storage"
)

// BenchmarkEncode: one event, with a small body after, to the CloudEvent
// the stream sends (and its protobuf bytes, as gRPC marshals it).
func BenchmarkEncode(b *testing.B) {
	ev := &changefeed.Event{EventID: "0b6a4c1e-58f4-4b8e-9d43-5e2a7e1f3c10:4f9b2d7a-3c1e-4a5b-8d6f-1e2c3b4a5d6e",
		TenantID: "tenant-a", TransactionID: "0b6a4c1e-58f4-4b8e-9d43-5e2a7e1f3c10", Cursor: "0-123456",
		EmittedAt: time.Date(2026, 11, 27, 1, 2, 3, 456789000, time.UTC), ModelName: "order", ModelVersion: 1,
		EntityID: "4f9b2d7a-3c1e-4a5b-8d6f-1e2c3b4a5d6e", Kind: "UPDATE", FromState: "NEW", ToState: "PAID",
		TransitionName: "pay", BodyAfter: json.RawMessage(`{"orderId":"o-1","total":42.5,"customer":{"id":"c-9","name":"Ada"},"lines":[{"sku":"A","qty":2}]}`)}
	b.Run("cloudevent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := changes.Encode(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cloudevent+marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			msg, err := changes.Encode(ev)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := proto.Marshal(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCommitToSubscriber: eight writers create entities at a steady
// total rate (1,000 and 10,000 events/s, paced by tickers; the rate
// reached is reported) and one gRPC subscriber on loopback, acking every
// 64th event, measures the time from each commit's emission instant to
// the event's arrival: p50 and p99 in ms. Memory engine: what is
// measured is the feed and the door, not a database.
func BenchmarkCommitToSubscriber(b *testing.B) {
	for _, rate := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			e := newEnv(b, "memory")
			key := e.lockedModel("tenant-a", "order")
			sub := e.subscribe("tenant-a", `{"filter":{"modelName":"order","modelVersion":1}}`)
			s, _, err := e.open(e.tokA, changes.Attach{SubscriptionID: sub.ID, Window: changes.MaxWindow})
			if err != nil {
				b.Fatal(err)
			}
			n := b.N
			lat := make([]time.Duration, 0, n)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for len(lat) < n {
					m, ok := <-s.msgs
					if !ok {
						return
					}
					if m.GetType() != changes.TypeEvent {
						continue
					}
					at := m.GetAttributes()[changes.AttrTime].GetCeTimestamp().AsTime()
					lat = append(lat, time.Since(at))
					if len(lat)%64 == 0 || len(lat) == n {
						ack, _ := wire.New("bench", changes.TypeAckRequest, changes.Ack{Cursor: m.GetAttributes()[changes.AttrCursor].GetCeString()})
						if s.s.Send(ack) != nil {
							return
						}
					}
				}
			}()
			// Writers: a ticker paces batches so the total rate holds.
			const writers = 8
			per := time.Second / time.Duration(rate) * writers
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for w := range writers {
				count := n / writers
				if w < n%writers {
					count++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					t := time.NewTicker(per)
					defer t.Stop()
					for i := range count {
						<-t.C
						createQuiet(e, key, i)
					}
				}()
			}
			wg.Wait()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				b.Fatalf("received %d of %d", len(lat), n)
			}
			b.StopTimer()
			if len(lat) < n {
				b.Fatalf("received %d of %d: %v", len(lat), n, s.err)
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// createQuiet writes one entity from a writer goroutine.
func createQuiet(e *env, key storage.ModelKey, n int) {
	_, _ = e.ents.Create(context.Background(), entityActor, key, "JSON", fmt.Appendf(nil, `{"n":%d,"s":"x"}`, n), 1)
}
