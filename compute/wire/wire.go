// Package wire is the compute-member protocol shared by svc's gRPC server
// and its member client: CloudEvent type names, the JSON payloads they
// carry, and envelope helpers. JSON goes out in text_data; both text_data
// and binary_data are read.
package wire

import (
	"errors"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	ce "svc/compute/pb/cloudevents"
)

// CloudEvent type names.
const (
	TypeJoin               = "CalculationMemberJoinEvent"
	TypeGreet              = "CalculationMemberGreetEvent"
	TypeKeepAlive          = "CalculationMemberKeepAliveEvent"
	TypeAck                = "EventAckResponse"
	TypeProcessorRequest   = "EntityProcessorCalculationRequest"
	TypeProcessorResponse  = "EntityProcessorCalculationResponse"
	TypeCriteriaRequest    = "EntityCriteriaCalculationRequest"
	TypeCriteriaResponse   = "EntityCriteriaCalculationResponse"
	TypeFunctionRequest    = "EntityFunctionCalculationRequest"
	TypeFunctionResponse   = "EntityFunctionCalculationResponse"
	ServerSource           = "svc"
	SpecVersion            = "1.0"
	AttrAuthType           = "authtype"
	AttrAuthID             = "authid"
	AttrAuthClaims         = "authclaims"
	AttrTxToken            = "cyodatxtoken"
	MetadataAuthorization  = "authorization"
	MetadataTxToken        = "tx-token"
	DefaultMaxRecvMsgBytes = 16 << 20
)

// Join is a member's first message.
type Join struct {
	ID                  string   `json:"id,omitempty"`
	Tags                []string `json:"tags"`
	JoinedLegalEntityID string   `json:"joinedLegalEntityId,omitempty"`
}

// Greet answers a join.
type Greet struct {
	ID                  string `json:"id"`
	MemberID            string `json:"memberId"`
	JoinedLegalEntityID string `json:"joinedLegalEntityId"`
	Success             bool   `json:"success"`
}

// KeepAlive is the server's liveness ping.
type KeepAlive struct {
	ID       string `json:"id"`
	MemberID string `json:"memberId"`
	Success  bool   `json:"success"`
}

// Ack acknowledges an event.
type Ack struct {
	ID            string   `json:"id,omitempty"`
	SourceEventID string   `json:"sourceEventId"`
	Success       bool     `json:"success"`
	Warnings      []string `json:"warnings,omitempty"`
	Error         *Error   `json:"error,omitempty"`
}

// Error is the error object of a response.
type Error struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable,omitempty"`
}

// Ref names a workflow.
type Ref struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// TransitionRef names a transition and the states it joins.
type TransitionRef struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	StateFrom string `json:"stateFrom"`
	StateTo   string `json:"stateTo"`
}

// ModelKey names a model.
type ModelKey struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
}

// EntityMeta is the entity metadata sent with a request.
type EntityMeta struct {
	ID             string   `json:"id"`
	ModelKey       ModelKey `json:"modelKey"`
	State          string   `json:"state"`
	CreationDate   string   `json:"creationDate,omitempty"`
	LastUpdateTime string   `json:"lastUpdateTime,omitempty"`
	TransactionID  string   `json:"transactionId,omitempty"`
}

// Payload carries entity data.
type Payload struct {
	Type string          `json:"type,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	Meta *EntityMeta     `json:"meta,omitempty"`
}

// Request is a processor, criteria or function calculation request; the
// fields of the other kinds stay empty and are omitted.
type Request struct {
	ID            string        `json:"id"`
	RequestID     string        `json:"requestId"`
	EntityID      string        `json:"entityId"`
	ProcessorID   string        `json:"processorId,omitempty"`
	ProcessorName string        `json:"processorName,omitempty"`
	CriteriaID    string        `json:"criteriaId,omitempty"`
	CriteriaName  string        `json:"criteriaName,omitempty"`
	FunctionID    string        `json:"functionId,omitempty"`
	FunctionName  string        `json:"functionName,omitempty"`
	Target        string        `json:"target,omitempty"`
	Workflow      Ref           `json:"workflow"`
	Transition    TransitionRef `json:"transition"`
	TransactionID string        `json:"transactionId,omitempty"`
	Success       bool          `json:"success"`
	Parameters    string        `json:"parameters,omitempty"`
	Payload       *Payload      `json:"payload,omitempty"`
}

// Response is a member's processor or criteria response. Pointers keep
// "absent" apart from false: a missing success is a failure, a missing
// matches is no match.
type Response struct {
	ID        string `json:"id,omitempty"`
	RequestID string `json:"requestId"`
	EntityID  string `json:"entityId,omitempty"`
	Success   *bool  `json:"success,omitempty"`
	Matches   *bool  `json:"matches,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// ResultKind and Result answer a function request.
	ResultKind string          `json:"resultKind,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Payload    *Payload        `json:"payload,omitempty"`
	Error      *Error          `json:"error,omitempty"`
	Warnings   []string        `json:"warnings,omitempty"`
}

// ErrProtoData is returned for an event whose data is a protobuf Any; only
// JSON payloads are understood.
var ErrProtoData = errors.New("proto_data payloads are not supported; send JSON in text_data or binary_data")

// Data returns an event's JSON payload from text_data or binary_data.
func Data(ev *ce.CloudEvent) ([]byte, error) {
	switch d := ev.GetData().(type) {
	case *ce.CloudEvent_TextData:
		return []byte(d.TextData), nil
	case *ce.CloudEvent_BinaryData:
		return d.BinaryData, nil
	case *ce.CloudEvent_ProtoData:
		return nil, ErrProtoData
	}
	return nil, errors.New("event has no data")
}

// Decode reads an event's JSON payload into v, ignoring unknown fields.
func Decode(ev *ce.CloudEvent, v any) error {
	b, err := Data(ev)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// New builds an event of type typ with v as JSON in text_data and a
// random id.
func New(source, typ string, v any) (*ce.CloudEvent, error) {
	return NewWithID(uuid.NewString(), source, typ, v)
}

// NewWithID is New with the event id given (requests reuse their
// requestId).
func NewWithID(id, source, typ string, v any) (*ce.CloudEvent, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &ce.CloudEvent{
		Id: id, Source: source, SpecVersion: SpecVersion, Type: typ,
		Data: &ce.CloudEvent_TextData{TextData: string(b)},
	}, nil
}

// StringAttr is a ce_string attribute value.
func StringAttr(s string) *ce.CloudEvent_CloudEventAttributeValue {
	return &ce.CloudEvent_CloudEventAttributeValue{Attr: &ce.CloudEvent_CloudEventAttributeValue_CeString{CeString: s}}
}
