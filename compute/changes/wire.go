package changes

import (
	json "github.com/goccy/go-json"
	"google.golang.org/protobuf/types/known/timestamppb"

	"svc/changefeed"
	ce "svc/compute/pb/cloudevents"
	"svc/compute/wire"
)

// CloudEvent types of the stream. The client sends AttachRequest first,
// then AckRequests; the server answers AttachResponse, then sends Events,
// and a Cut before a stream it ends.
const (
	TypeAttachRequest  = "EntityChangeAttachRequest"
	TypeAttachResponse = "EntityChangeAttachResponse"
	TypeAckRequest     = "EntityChangeAckRequest"
	TypeEvent          = "EntityChangeEvent"
	TypeCut            = "EntityChangeCutEvent"
)

// Attributes of an EntityChangeEvent (the CloudEvents extension attribute
// names are lower-case letters and digits). subject is the entity id and
// time the emission instant, as CloudEvents defines them.
const (
	AttrCursor          = "cursor"
	AttrKind            = "kind"
	AttrModelName       = "modelname"
	AttrModelVersion    = "modelversion"
	AttrSubject         = "subject"
	AttrTime            = "time"
	AttrDataContentType = "datacontenttype"
	// AttrBodyOmitted is true on an event whose bodies were left out
	// because with them it would pass MaxMessageBytes.
	AttrBodyOmitted = "bodyomitted"
)

// Window bounds and the message cap.
const (
	// DefaultWindow is how many events may be sent and not yet
	// acknowledged when the attach names no window.
	DefaultWindow = 256
	// MaxWindow is the largest window an attach may ask for.
	MaxWindow = 4096
	// MaxMessageBytes caps a message either way (16 MiB, as the compute
	// protocol's).
	MaxMessageBytes = wire.DefaultMaxRecvMsgBytes
)

// Attach is the data of an EntityChangeAttachRequest.
type Attach struct {
	// SubscriptionID names a subscription of the caller's tenant.
	SubscriptionID string `json:"subscriptionId"`
	// ResumeAfter is the cursor of the last event the consumer processed
	// (optional): the stream resumes after it and everything up to it is
	// acknowledged, as SSE's Last-Event-ID. Without it the stream resumes
	// after the stored (acknowledged) cursor.
	ResumeAfter string `json:"resumeAfter,omitempty"`
	// Window is how many events may be in flight unacknowledged (1 to
	// MaxWindow; 0 means DefaultWindow).
	Window int `json:"window,omitempty"`
}

// Attached is the data of an EntityChangeAttachResponse.
type Attached struct {
	SubscriptionID string `json:"subscriptionId"`
	// Cursor is the position the stream starts after.
	Cursor string `json:"cursor"`
	Window int    `json:"window"`
}

// Ack is the data of an EntityChangeAckRequest: every event up to and
// including Cursor is acknowledged. Acks are cumulative; an older one is
// ignored, one past the last event sent is refused.
type Ack struct {
	Cursor string `json:"cursor"`
}

// Cut is the data of an EntityChangeCutEvent, the last message of a
// stream the server ends (reason SHUTDOWN or ERROR): reconnect, to this
// node or another, and resume.
type Cut struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// eventAttrs holds one event's attribute values in one allocation.
type eventAttrs struct {
	vals [7]ce.CloudEvent_CloudEventAttributeValue
	strs [5]ce.CloudEvent_CloudEventAttributeValue_CeString
	ver  ce.CloudEvent_CloudEventAttributeValue_CeInteger
	ts   ce.CloudEvent_CloudEventAttributeValue_CeTimestamp
	tsv  timestamppb.Timestamp
	data ce.CloudEvent_TextData
}

// Encode is ev as the EntityChangeEvent the stream sends: id the eventId
// (the consumer's idempotency key), the event as JSON in text_data (the
// same document the SSE door sends), and the cursor, kind, model, entity
// id (subject) and emission time as attributes, so a consumer can route
// without decoding. An event that would pass MaxMessageBytes goes without
// its bodies, marked bodyomitted.
func Encode(ev *changefeed.Event) (*ce.CloudEvent, error) {
	data, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	omitted := false
	if len(data) > MaxMessageBytes-64<<10 && (ev.BodyAfter != nil || ev.BodyBefore != nil) {
		slim := *ev
		slim.BodyAfter, slim.BodyBefore = nil, nil
		if data, err = json.Marshal(&slim); err != nil {
			return nil, err
		}
		omitted = true
	}
	a := &eventAttrs{}
	a.strs[0].CeString = ev.Cursor
	a.strs[1].CeString = ev.Kind
	a.strs[2].CeString = ev.ModelName
	a.strs[3].CeString = ev.EntityID
	a.strs[4].CeString = "application/json"
	a.ver.CeInteger = int32(ev.ModelVersion)
	a.tsv.Seconds, a.tsv.Nanos = ev.EmittedAt.Unix(), int32(ev.EmittedAt.Nanosecond())
	a.ts.CeTimestamp = &a.tsv
	for i := range a.strs {
		a.vals[i].Attr = &a.strs[i]
	}
	a.vals[5].Attr = &a.ver
	a.vals[6].Attr = &a.ts
	attrs := make(map[string]*ce.CloudEvent_CloudEventAttributeValue, 8)
	attrs[AttrCursor] = &a.vals[0]
	attrs[AttrKind] = &a.vals[1]
	attrs[AttrModelName] = &a.vals[2]
	attrs[AttrSubject] = &a.vals[3]
	attrs[AttrDataContentType] = &a.vals[4]
	attrs[AttrModelVersion] = &a.vals[5]
	attrs[AttrTime] = &a.vals[6]
	if omitted {
		attrs[AttrBodyOmitted] = &ce.CloudEvent_CloudEventAttributeValue{Attr: &ce.CloudEvent_CloudEventAttributeValue_CeBoolean{CeBoolean: true}}
	}
	a.data.TextData = string(data)
	return &ce.CloudEvent{Id: ev.EventID, Source: wire.ServerSource, SpecVersion: wire.SpecVersion, Type: TypeEvent,
		Attributes: attrs, Data: &a.data}, nil
}

// Decode reads an EntityChangeEvent back into the event (clients, tests).
func Decode(msg *ce.CloudEvent) (changefeed.Event, error) {
	var ev changefeed.Event
	err := wire.Decode(msg, &ev)
	return ev, err
}
