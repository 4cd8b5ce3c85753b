package fast

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
)

// BenchmarkCreateIdempotencyKey: a single create over loopback on the
// memory engine without the header (the path every create takes: one
// header lookup more) and with a new key per request (reserve, stamp in
// the commit, complete).
func BenchmarkCreateIdempotencyKey(b *testing.B) {
	e := newEntityEnv(b, "memory")
	e.lockedModel("ta", "idem", 1, `{"a":1}`)
	body := []byte(`{"a":1}`)
	for _, keyed := range []bool{false, true} {
		name := "no key"
		if keyed {
			name = "key"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				req, err := http.NewRequest("POST", e.base+"/entity/JSON/idem/1", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer ta")
				if keyed {
					req.Header.Set("Idempotency-Key", "bench-"+strconv.Itoa(i))
				}
				resp, err := e.client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
