package model

import (
	"testing"

	"svc/platform/apierr"
	"svc/storage"
	"svc/workflow"
)

// TestOddTextRefusedWithoutTheHTTPGuard: the model service itself (what
// the gRPC model RPCs call) refuses names that are not text and sample
// documents with odd text or duplicate keys, on both engines, and so does
// the workflow import decoder every adapter calls (workflow.ParseImport),
// with 400 BAD_REQUEST rather than a storage error.
func TestOddTextRefusedWithoutTheHTTPGuard(t *testing.T) {
	forEachEngine(t, func(t *testing.T, store storage.Models) {
		s := New(store, nil)
		for _, name := range []string{"a\x00b", "\xff", "\xed\xa0\x80"} {
			k := storage.ModelKey{Name: name, Version: 1}
			_, err := s.Import(ctxb, "A", k, "JSON", ConvSampleData, []byte(`{"a":1}`))
			wantCode(t, err, apierr.BadRequest.String())
			_, err = s.Lock(ctxb, "A", k)
			wantCode(t, err, apierr.BadRequest.String())
		}
		k := storage.ModelKey{Name: "ok", Version: 1}
		for _, doc := range []string{`{"a":1,"a":2}`, `{"a":"\u0000"}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}"} {
			_, err := s.Import(ctxb, "A", k, "JSON", ConvSampleData, []byte(doc))
			wantCode(t, err, apierr.BadRequest.String())
		}
		mustImport(t, s, "A", k, `{"a":1}`)
		// The adapter decodes a workflow import with workflow.ParseImport
		// before model.Service sees it; the refusal happens there.
		_, err := workflow.ParseImport([]byte(`{"importMode":"MERGE","workflows":[{"name":"w","name":"v"}]}`))
		wantCode(t, err, apierr.BadRequest.String())
	})
}
