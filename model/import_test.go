package model

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"svc/platform/apierr"
	"svc/storage"
)

// Concurrent imports into one model that does not exist yet: the losers of
// the create race and of later revision races retry against the newer
// record, and every sample's field survives.
func TestImportConcurrentMerges(t *testing.T) {
	forEachEngine(t, func(t *testing.T, store storage.Models) {
		s := New(store, nil, WithMaxRetries(64))
		k := storage.ModelKey{Name: "race", Version: 1}
		const n = 12
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				_, err := s.Import(ctxb, "A", k, FormatJSON, ConvSampleData, []byte(fmt.Sprintf(`{"f%02d":%d}`, i, i)))
				errs <- err
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		got := exportSV(t, s, "A", k)
		for i := 0; i < n; i++ {
			if !strings.Contains(got, fmt.Sprintf(`".f%02d":"INTEGER"`, i)) {
				t.Fatalf("f%02d lost: %s", i, got)
			}
		}
	})
}

func TestImportRetryAfterConflictReparsesTheSample(t *testing.T) {
	cs := &conflictingStore{Models: newStore(t, "memory")}
	s := New(cs, nil, WithMaxRetries(3))
	k := storage.ModelKey{Name: "m", Version: 1}
	mustImport(t, s, "A", k, `{"a":1}`)
	cs.fails = 2
	mustImport(t, s, "A", k, `{"b":"x"}`)
	if got := exportSV(t, s, "A", k); got != `{"currentState":"UNLOCKED","model":{"$":{".a":"INTEGER",".b":"STRING"}}}` {
		t.Fatalf("after retried import: %s", got)
	}
}

func TestBodyLimits(t *testing.T) {
	s := New(newStore(t, "memory"), nil)
	k := storage.ModelKey{Name: "m", Version: 1}
	mustImport(t, s, "A", k, `{"a":1}`)
	big := append([]byte(`{"a":"`), bytes.Repeat([]byte("x"), MaxBodyBytes)...)
	big = append(big, `"}`...)
	_, err := s.Import(ctxb, "A", k, FormatJSON, ConvSampleData, big)
	wantCode(t, err, apierr.BadRequest.String())
	_, err = s.Validate(ctxb, "A", k, big)
	e := wantCode(t, err, apierr.BadRequest.String())
	if !strings.Contains(e.Message, "failed to read body") {
		t.Errorf("validate over the limit: %v", e)
	}
	s.Lock(ctxb, "A", k)
	wantCode(t, s.Admit(ctxb, "A", k, [][]byte{big}), apierr.BadRequest.String())
}
