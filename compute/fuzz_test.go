package compute

import (
	"log/slog"
	"testing"

	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
)

// FuzzInboundEvent feeds arbitrary member messages to the post-join
// handler: nothing a member sends may panic the server, and a response only
// ever completes the request it names.
func FuzzInboundEvent(f *testing.F) {
	f.Add(wire.TypeProcessorResponse, `{"requestId":"r1","success":true,"payload":{"data":{"a":1}}}`, false)
	f.Add(wire.TypeCriteriaResponse, `{"requestId":"r1","success":true,"matches":null,"reason":"x"}`, true)
	f.Add(wire.TypeAck, `{"sourceEventId":"k","success":true}`, false)
	f.Add(wire.TypeJoin, `{"id":"again","tags":["a"]}`, false)
	f.Add("Unknown", `[1,2`, true)
	s := New(Config{}, testTokens, slog.New(slog.DiscardHandler))
	f.Fuzz(func(t *testing.T, typ, payload string, binary bool) {
		m := newMember("m", "t1", nil)
		ch := m.await("r1")
		ev := &ce.CloudEvent{Type: typ, Data: &ce.CloudEvent_TextData{TextData: payload}}
		if binary {
			ev.Data = &ce.CloudEvent_BinaryData{BinaryData: []byte(payload)}
		}
		s.inbound(m, ev)
		select {
		case r := <-ch:
			if r.resp == nil || r.resp.RequestID != "r1" {
				t.Fatalf("completed with %+v", r)
			}
		default:
		}
	})
}
