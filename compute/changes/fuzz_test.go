package changes_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"svc/compute/changes"
	ce "svc/compute/pb/cloudevents"
)

// FuzzClientMessage: whatever a client sends as an attach or an ack, the
// parsers answer a value that passes their checks or InvalidArgument,
// and never panic. Seeds in testdata/fuzz/FuzzClientMessage.
func FuzzClientMessage(f *testing.F) {
	f.Add(changes.TypeAttachRequest, `{"subscriptionId":"abc","resumeAfter":"0-12","window":3}`, false)
	f.Add(changes.TypeAttachRequest, `{"subscriptionId":"abc","window":-1}`, true)
	f.Add(changes.TypeAckRequest, `{"cursor":"17-4"}`, false)
	f.Add(changes.TypeAckRequest, `{"cursor":"-"}`, true)
	f.Add("EntityGetRequest", `{}`, false)
	f.Fuzz(func(t *testing.T, typ, data string, binary bool) {
		msg := &ce.CloudEvent{Id: "1", Source: "fuzz", SpecVersion: "1.0", Type: typ}
		if binary {
			msg.Data = &ce.CloudEvent_BinaryData{BinaryData: []byte(data)}
		} else {
			msg.Data = &ce.CloudEvent_TextData{TextData: data}
		}
		if a, err := changes.ParseAttach(msg); err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("attach: %v", err)
			}
		} else if a.SubscriptionID == "" || a.Window < 1 || a.Window > changes.MaxWindow {
			t.Fatalf("attach accepted %+v", a)
		}
		if c, err := changes.ParseAck(msg); err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("ack: %v", err)
			}
		} else if c.Hi < 0 || c.Lo < 0 {
			t.Fatalf("ack accepted %v", c)
		}
	})
}
