package fast

import (
	"bytes"
	"strconv"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/storage"
	"svc/streamdata"
)

// The stream-data wire forms the HTTP adapter decodes and encodes
// (docs/decisions/0025-stream-data.md); the streamdata service takes and
// returns Go values.

// badStreamDef is a 400 in the wording of the definition parser.
func badStreamDef(msg string) error {
	return apierr.New(apierr.BadRequest, "stream definition: "+msg)
}

// streamWireRequest is a StreamDataRequest as sent: the numbers a client
// gets wrong are read as raw JSON, so each is checked and named on its own.
type streamWireRequest struct {
	Def          json.RawMessage `json:"sdDef"`
	Length       int             `json:"length"`
	PointTime    json.RawMessage `json:"pointTime"`
	Offset       json.RawMessage `json:"offset"`
	FromPosIndex json.RawMessage `json:"fromPosIndex"`
}

// streamPosition reads a row position: absent or null is 0; anything but
// an integer from 0 to streamdata.MaxPosition is 400 naming the field.
func streamPosition(raw json.RawMessage, field string) (int, error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || s == "null" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > streamdata.MaxPosition {
		return 0, apierr.New(apierr.BadRequest, field+" must be an integer from 0 to "+strconv.Itoa(streamdata.MaxPosition),
			apierr.P("field", field), apierr.P("invalidValue", s))
	}
	return int(n), nil
}

// streamPointTime reads pointTime (epoch ms): absent, null or not
// positive means now; the instant must lie in storage.InstantInRange.
func streamPointTime(raw json.RawMessage) (*int64, error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	bad := apierr.New(apierr.BadRequest, "pointTime must be epoch milliseconds of an instant "+storage.InstantRangeText,
		apierr.P("field", "pointTime"), apierr.P("invalidValue", s))
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, bad
	}
	// The page reads as of the end of that millisecond.
	if ms > 0 && !storage.InstantInRange(time.UnixMilli(ms).Add(time.Millisecond-time.Nanosecond)) {
		return nil, bad
	}
	return &ms, nil
}

// decodeStreamRequest decodes a StreamDataRequest body: the envelope, then
// offset, fromPosIndex and pointTime, then the definition (in that order,
// so the first fault is the one reported). The definition keeps slices of
// body: the caller passes a buffer of its own when the page outlives the
// request's.
func decodeStreamRequest(body []byte) (*streamdata.Request, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, badStreamDef("the body must be a StreamDataRequest object")
	}
	var w streamWireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, badStreamDef("the request does not parse: " + err.Error())
	}
	r := &streamdata.Request{Length: w.Length}
	var err error
	if r.Offset, err = streamPosition(w.Offset, "offset"); err != nil {
		return nil, err
	}
	if r.FromPosIndex, err = streamPosition(w.FromPosIndex, "fromPosIndex"); err != nil {
		return nil, err
	}
	if r.PointTime, err = streamPointTime(w.PointTime); err != nil {
		return nil, err
	}
	if r.Def, err = streamdata.ParseDef(w.Def); err != nil {
		return nil, err
	}
	return r, nil
}

// appendStreamDeleteResult renders a StreamDataDeleteResult with the
// contract's spellings.
func appendStreamDeleteResult(b []byte, r *streamdata.DeleteResult) []byte {
	b = append(b, `{"numberOfEntitites":`...)
	b = strconv.AppendInt(b, r.Matched, 10)
	b = append(b, `,"numberOfEntititesRemoved":`...)
	b = strconv.AppendInt(b, r.Removed, 10)
	b = append(b, `,"idToError":{`...)
	i := 0
	for id, msg := range r.Failed {
		if i > 0 {
			b = append(b, ',')
		}
		i++
		b = append(b, '"')
		b = append(b, uuid.UUID(id).String()...)
		b = append(b, `":`...)
		b = appendMarshaled(b, msg)
	}
	return append(b, "}}"...)
}

// appendMarshaled appends v as json.Marshal writes it (null if it cannot).
func appendMarshaled(b []byte, v any) []byte {
	enc, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}
