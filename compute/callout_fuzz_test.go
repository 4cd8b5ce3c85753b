package compute

import (
	"errors"
	"testing"

	json "github.com/goccy/go-json"

	"svc/cluster/peer"
	"svc/compute/wire"
)

// FuzzParseCallout: any payload of the internal dispatch route is either
// refused as malformed (peer.ErrMalformed, a sealed 400) or a callout the
// dispatch can run as it is: a known type and principal kind, a tenant, a
// request and a timeout a time.Duration holds; and what a node sends
// (forward's encoding) always parses.
func FuzzParseCallout(f *testing.F) {
	good, _ := json.Marshal(&callout{Type: wire.TypeProcessorRequest, What: "processor p", Tenant: "T", AuthKind: "user",
		AuthID: "u", Tags: []string{"far"}, TimeoutMs: 5000, Request: &wire.Request{EntityID: "e"}})
	for _, s := range []string{string(good), `{}`, `null`, `[]`, `{"type":"x"}`, `{"timeoutMs":-1}`, `{"timeoutMs":1e30}`,
		`{"request":null,"tenant":"T"}`, `{"tenant":5}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		co, err := parseCallout(in)
		if err != nil {
			if !errors.Is(err, peer.ErrMalformed) {
				t.Fatalf("refusal %v does not wrap peer.ErrMalformed", err)
			}
			return
		}
		if co.Request == nil || co.Tenant == "" || co.TimeoutMs < 0 || co.TimeoutMs > maxCalloutTimeoutMs {
			t.Fatalf("accepted %+v", co)
		}
		switch co.Type {
		case wire.TypeProcessorRequest, wire.TypeCriteriaRequest, wire.TypeFunctionRequest:
		default:
			t.Fatalf("accepted type %q", co.Type)
		}
		if _, err := attributes(callFor(co)); err != nil {
			t.Fatalf("accepted a callout the dispatch refuses: %v", err)
		}
		// What was accepted survives forward's encoding.
		b, err := json.Marshal(co)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseCallout(b); err != nil {
			t.Fatalf("re-encoded callout refused: %v", err)
		}
	})
}
