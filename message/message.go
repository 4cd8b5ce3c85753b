// Package message is the messaging API: a posted message is a header
// (from the request's headers), a flat metaData map and a JSON payload,
// stored per tenant. No workflow runs on messages.
package message

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/platform/jsondoc"
	"svc/storage"
)

// MaxBodyBytes bounds a message body; larger is 413.
const MaxBodyBytes = 10 << 20

// subjectPattern is the contract's subject pattern, enforced (docs/decisions/0022-audit-and-messages.md).
var subjectPattern = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,256}$`)

// Header is what the request's headers say about a message.
type Header struct {
	ContentType     string
	ContentLength   int64
	ContentEncoding string
	MessageID       string
	UserID          string
	Recipient       string
	ReplyTo         string
	CorrelationID   string
}

// Service stores and reads messages.
type Service struct {
	store storage.Messages
	now   func() time.Time
}

func New(store storage.Messages) *Service { return &Service{store: store, now: time.Now} }

func badRequest(msg string) error { return apierr.New(apierr.BadRequest, msg) }

// body is the request body: payload is required (null allowed), metaData
// (alias meta-data) an optional flat object.
type body struct {
	Payload   json.RawMessage            `json:"payload"`
	MetaData  map[string]json.RawMessage `json:"metaData"`
	MetaData2 map[string]json.RawMessage `json:"meta-data"`
}

// Created is the answer of New.
type Created struct {
	ID            [16]byte
	TransactionID [16]byte
}

// Post validates and stores a message.
func (s *Service) Post(ctx context.Context, tenant, subject string, h *Header, raw []byte) (*Created, error) {
	if !subjectPattern.MatchString(subject) {
		return nil, apierr.New(apierr.BadRequest, "invalid value for parameter 'subject'",
			apierr.P("parameter", "subject"), apierr.P("invalidValue", subject))
	}
	if h.ContentType == "" || h.ContentLength < 0 {
		return nil, badRequest("invalid request parameter")
	}
	// The header is stored as JSON text: each value must be text.
	for _, f := range [...]struct{ name, v string }{{"Content-Type", h.ContentType}, {"Content-Encoding", h.ContentEncoding},
		{"X-Message-ID", h.MessageID}, {"X-User-ID", h.UserID}, {"X-Recipient", h.Recipient},
		{"X-Reply-To", h.ReplyTo}, {"X-Correlation-ID", h.CorrelationID}} {
		if err := jsondoc.TextProblem("header", f.name, f.v); err != nil {
			return nil, err
		}
	}
	// Payload and metaData are served back as JSON: the body must be a
	// document svc stores (UTF-8, no NUL, no lone surrogate, no member
	// named twice) before it is taken apart.
	if err := jsondoc.CheckProblem(raw, "invalid JSON: expected an object with a 'payload' field", ""); err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return nil, badRequest("invalid JSON: expected an object with a 'payload' field")
	}
	if _, ok := members["payload"]; !ok {
		return nil, badRequest("missing required field: payload")
	}
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, badRequest("invalid JSON: metaData must be an object")
	}
	var content bytes.Buffer
	if err := json.Compact(&content, b.Payload); err != nil {
		return nil, badRequest("invalid JSON: expected an object with a 'payload' field")
	}
	meta := b.MetaData
	if meta == nil {
		meta = b.MetaData2
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("message: encoding metaData: %w", err)
	}
	if h.ContentEncoding == "" {
		h.ContentEncoding = "UTF-8"
	}
	hdr, err := json.Marshal(headerJSON{Subject: subject, ContentType: h.ContentType, ContentLength: h.ContentLength,
		ContentEncoding: h.ContentEncoding, MessageID: h.MessageID, UserID: h.UserID, Recipient: h.Recipient,
		ReplyTo: h.ReplyTo, CorrelationID: h.CorrelationID})
	if err != nil {
		return nil, fmt.Errorf("message: encoding header: %w", err)
	}
	id, err := uuid.NewUUID()
	if err != nil {
		return nil, fmt.Errorf("message: id: %w", err)
	}
	tx, err := uuid.NewUUID()
	if err != nil {
		return nil, fmt.Errorf("message: id: %w", err)
	}
	m := &storage.Message{Tenant: tenant, ID: id, Header: hdr, MetaData: metaJSON, Content: content.Bytes(), CreatedAt: s.now().UTC()}
	if err := s.store.PutMessage(ctx, m); err != nil {
		return nil, err
	}
	return &Created{ID: id, TransactionID: tx}, nil
}

type headerJSON struct {
	Subject         string `json:"subject"`
	ContentType     string `json:"contentType"`
	ContentLength   int64  `json:"contentLength"`
	ContentEncoding string `json:"contentEncoding"`
	MessageID       string `json:"messageId,omitempty"`
	UserID          string `json:"userId,omitempty"`
	Recipient       string `json:"recipient,omitempty"`
	ReplyTo         string `json:"replyTo,omitempty"`
	CorrelationID   string `json:"correlationId,omitempty"`
}

func notFound(id [16]byte) error {
	sid := uuid.UUID(id).String()
	return apierr.New(apierr.EntityNotFound, "message id="+sid+" not found", apierr.P("messageId", sid))
}

// Get returns a message of the tenant.
func (s *Service) Get(ctx context.Context, tenant string, id [16]byte) (*storage.Message, error) {
	m, err := s.store.GetMessage(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, notFound(id)
	}
	return m, err
}

// Delete removes one message; an unknown one is 404.
func (s *Service) Delete(ctx context.Context, tenant string, id [16]byte) error {
	err := s.store.DeleteMessage(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return notFound(id)
	}
	return err
}

// DeleteMany removes the listed messages that exist; raw is a JSON array
// of UUID strings. It returns the ids as given, in order.
func (s *Service) DeleteMany(ctx context.Context, tenant string, raw []byte) ([]string, error) {
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		return nil, badRequest("invalid JSON: expected array of UUID strings")
	}
	ids := make([][16]byte, len(list))
	for i, s := range list {
		u, err := uuid.Parse(s)
		if err != nil {
			return nil, badRequest("id list contains a value that is not a valid UUID")
		}
		ids[i] = u
	}
	if err := s.store.DeleteMessages(ctx, tenant, ids); err != nil {
		return nil, err
	}
	return list, nil
}
