package message

import (
	"context"
	"testing"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/platform/jsondoc"
	"svc/storage/memory"
)

// FuzzPost: any body is stored with a payload that is valid compact JSON,
// or refused with BAD_REQUEST.
func FuzzPost(f *testing.F) {
	for _, s := range []string{`{"payload":{"a":1},"metaData":{"k":"v"}}`, `{"payload":null}`, `{"meta-data":{}}`, `[1]`, `{"payload":1,"metaData":[1]}`, ``, `{"payload": [1, 2 ]}`,
		"{\"payload\":\"\xff\"}", "{\"payload\":1,\"metaData\":{\"k\":\"\xfe\"}}", `{"payload":"\u0000"}`, `{"payload":"\ud800"}`,
		`{"payload":{"a":1,"a":2}}`, `{"payload":1,"payload":2}`} {
		f.Add([]byte(s))
	}
	store := memory.NewMessages()
	s := New(store)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := s.Post(context.Background(), "t", "subj", &Header{ContentType: "application/json", ContentLength: int64(len(b))}, b)
		if err != nil {
			if e, ok := apierr.As(err); !ok || e.Code != apierr.BadRequest {
				t.Fatalf("error %v is not BAD_REQUEST", err)
			}
			return
		}
		m, err := s.Get(context.Background(), "t", c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(m.Content) || !json.Valid(m.MetaData) || !json.Valid(m.Header) ||
			jsondoc.Check(m.Content) != nil || jsondoc.Check(m.MetaData) != nil || jsondoc.Check(m.Header) != nil {
			t.Fatalf("stored invalid JSON: %s %s %s", m.Content, m.MetaData, m.Header)
		}
	})
}
