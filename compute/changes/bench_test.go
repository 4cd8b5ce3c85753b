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
// the event's arrival: p50 and p99 in ms. batch=10 makes each request a
// collection create of 10 entities (one commit, ten events), which
// reaches 10,000 events/s on two shared cores where single creates do
// not (fast's BenchmarkChangeFeedWriters). Memory engine: what is
// measured is the feed and the door, not a database.
func BenchmarkCommitToSubscriber(b *testing.B) {
	for _, r := range []struct{ rate, batch int }{{1000, 1}, {10000, 1}, {10000, 10}} {
		rate, batch := r.rate, r.batch
		b.Run(fmt.Sprintf("rate=%d/batch=%d", rate, batch), func(b *testing.B) {
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
			per := time.Second * time.Duration(writers*batch) / time.Duration(rate)
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
					for i := 0; i < count; i += batch {
						<-t.C
						createQuiet(e, key, i, min(batch, count-i))
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

// createQuiet writes k entities in one request (a collection create when
// k > 1, one transaction) from a writer goroutine.
func createQuiet(e *env, key storage.ModelKey, n, k int) {
	doc := fmt.Appendf(nil, `{"n":%d,"s":"x"}`, n)
	if k > 1 {
		doc = append(doc[:0], '[')
		for j := range k {
			if j > 0 {
				doc = append(doc, ',')
			}
			doc = fmt.Appendf(doc, `{"n":%d,"s":"x"}`, n+j)
		}
		doc = append(doc, ']')
	}
	_, _ = e.ents.Create(context.Background(), entityActor, key, "JSON", doc, k)
}
