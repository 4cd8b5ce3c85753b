package fast

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
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

// wireRequest is a StreamDataRequest as sent: the numbers a client
// gets wrong are read as raw JSON, so each is checked and named on its own.
// The names of this type, configDoc and planRequest appear in the decode
// errors clients read ("Go struct field wireRequest.length"): renaming one
// changes a wire message (TestStreamDataWireBytes).
type wireRequest struct {
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
	var w wireRequest
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

// Joda bean names of the stream-data wire form.
const (
	beanStreamConfig    = "com.cyoda.core.streamdata.StreamDataConfigDef"
	beanStreamContainer = "com.cyoda.core.streamdata.StreamDataConfigDefContainer"
)

// streamTimeLayout is how stream-data answers write instants.
const streamTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// streamObject decodes raw as a JSON object; null or absent gives nil.
func streamObject(raw json.RawMessage, what string) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, apierr.New(apierr.BadRequest, "stream definition: "+what+" must be an object", apierr.P("field", what))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, apierr.New(apierr.BadRequest, "stream definition: "+what+" does not parse: "+err.Error(), apierr.P("field", what))
	}
	return m, nil
}

// streamItems reads a plain JSON array or a Joda array wrapper
// {"@meta": "X[]", "value": [...]}; null or absent gives nil.
func streamItems(raw json.RawMessage, what string) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '{' {
		m, err := streamObject(raw, what)
		if err != nil {
			return nil, err
		}
		v, ok := m["value"]
		if !ok {
			return nil, apierr.New(apierr.BadRequest, "stream definition: "+what+" must be an array or a {\"@meta\", \"value\"} array wrapper", apierr.P("field", what))
		}
		return streamItems(v, what)
	}
	if raw[0] != '[' {
		return nil, apierr.New(apierr.BadRequest, "stream definition: "+what+" must be an array", apierr.P("field", what))
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, apierr.New(apierr.BadRequest, "stream definition: "+what+" does not parse: "+err.Error(), apierr.P("field", what))
	}
	return out, nil
}

// configDoc is a StreamDataConfigDef as submitted.
type configDoc struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Owner       string          `json:"owner"`
	CreateDate  json.RawMessage `json:"createDate"`
	Def         json.RawMessage `json:"streamDataDef"`
}

// decodeStreamConfig reads a StreamDataConfigDef and checks its
// definition; the definition's bytes are copied (they are stored).
func decodeStreamConfig(raw []byte) (*streamdata.Config, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, badStreamDef("the body must be a StreamDataConfigDef object")
	}
	var c configDoc
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, badStreamDef("the body does not parse: " + err.Error())
	}
	d, err := streamdata.ParseDef(c.Def)
	if err != nil {
		return nil, err
	}
	if err := streamdata.Check(d); err != nil {
		return nil, err
	}
	out := &streamdata.Config{ID: c.ID, Name: c.Name, Description: c.Description, Owner: c.Owner, Def: d,
		DefJSON: append(json.RawMessage(nil), bytes.TrimSpace(c.Def)...)}
	if t, ok := streamConfigDate(c.CreateDate); ok {
		out.CreatedAt = t
	}
	return out, nil
}

// decodeStreamContainer reads a StreamDataConfigDefContainer: data as a
// plain array or as the Joda {"@meta", "value"} wrapper. Each definition
// is decoded and its id checked in turn, so the first fault in document
// order is the one reported.
func decodeStreamContainer(body []byte) ([]*streamdata.Config, error) {
	top, err := streamObject(body, "container")
	if err != nil {
		return nil, err
	}
	if top == nil {
		return nil, apierr.New(apierr.BadRequest, "stream definition: the body must be a StreamDataConfigDefContainer", apierr.P("field", "data"))
	}
	list, err := streamItems(top["data"], "data")
	if err != nil {
		return nil, err
	}
	out := make([]*streamdata.Config, 0, len(list))
	for _, raw := range list {
		c, err := decodeStreamConfig(raw)
		if err != nil {
			return nil, err
		}
		if c.ID != "" {
			if _, err := streamdata.ParseID(c.ID, "id"); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// streamConfigDate reads a createDate as an ISO instant or epoch
// milliseconds; anything else, or an instant outside the storable range,
// is no date.
func streamConfigDate(raw json.RawMessage) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !storage.InstantInRange(t) {
			return time.Time{}, false
		}
		return t.UTC(), true
	}
	ms, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || !storage.InstantInRange(time.UnixMilli(ms)) {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

// appendStreamConfig renders a StreamDataConfigDef.
func appendStreamConfig(b []byte, c *storage.StreamConfig) []byte {
	b = append(b, `{"@bean":"`+beanStreamConfig+`","id":"`...)
	b = append(b, uuid.UUID(c.ID).String()...)
	b = append(b, `","name":`...)
	b = appendMarshaled(b, c.Name)
	b = append(b, `,"description":`...)
	b = appendMarshaled(b, c.Description)
	b = append(b, `,"owner":`...)
	b = appendMarshaled(b, c.Owner)
	b = append(b, `,"createDate":"`...)
	b = append(b, c.CreatedAt.UTC().Format(streamTimeLayout)...)
	b = append(b, `","streamDataDef":`...)
	if len(c.Def) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, c.Def...)
	}
	return append(b, '}')
}

// appendStreamConfigs renders definitions as a plain array.
func appendStreamConfigs(b []byte, cs []*storage.StreamConfig) []byte {
	b = append(b, '[')
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStreamConfig(b, c)
	}
	return append(b, ']')
}

// appendStreamContainer renders a StreamDataConfigDefContainer in the
// form both reference UIs read: data.value is the array.
func appendStreamContainer(b []byte, cs []*storage.StreamConfig) []byte {
	b = append(b, `{"@bean":"`+beanStreamContainer+`","data":{"@meta":"`+beanStreamConfig+`[]","value":`...)
	b = appendStreamConfigs(b, cs)
	return append(b, "}}"...)
}

// appendStreamIndexes renders the IndexConfigurationDto array of a model.
func appendStreamIndexes(b []byte, ixs []streamdata.IndexInfo) []byte {
	b = append(b, '[')
	for i, ix := range ixs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"indexId":"`...)
		b = append(b, uuid.UUID(ix.ID).String()...)
		b = append(b, `","indexName":`...)
		b = appendMarshaled(b, ix.Name)
		b = append(b, `,"rangeField":`...)
		b = appendStreamLeafCol(b, ix.RangePath)
		b = append(b, `,"noneRangeFields":[`...)
		for j, p := range ix.EqPaths {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendStreamLeafCol(b, p)
		}
		b = append(b, `],"createDate":`...)
		if ix.Created.IsZero() {
			b = append(b, "null"...)
		} else {
			b = appendMarshaled(b, ix.Created.UTC().Format(streamTimeLayout))
		}
		b = append(b, `,"readyForQuerying":`...)
		b = strconv.AppendBool(b, ix.Ready)
		b = append(b, `,"returnsList":false,"persisted":`...)
		b = strconv.AppendBool(b, ix.Persisted)
		b = append(b, `,"decision":"FULL_ACCESS"}`...)
	}
	return append(b, ']')
}

// appendStreamLeafCol renders one indexed field: its last path segment as
// the column name and the path.
func appendStreamLeafCol(b []byte, path string) []byte {
	b = append(b, `{"columnName":`...)
	name := path
	if i := strings.LastIndexAny(path, ".]"); i >= 0 && i+1 < len(path) {
		name = path[i+1:]
	}
	b = appendMarshaled(b, name)
	b = append(b, `,"columnPath":`...)
	b = appendMarshaled(b, path)
	return append(b, `,"type":"LEAF","decision":"FULL_ACCESS"}`...)
}

// planRequest is a QueryPlanRequest; the UI also sends entityClass.
type planRequest struct {
	Condition   json.RawMessage `json:"condition"`
	EntityClass string          `json:"entityClass"`
	AliasDefs   json.RawMessage `json:"aliasDefs"`
	Def         json.RawMessage `json:"sdDef"`
}

// decodeStreamPlanRequest reads a QueryPlanRequest into the definition
// to plan: sdDef when given, else one built from condition and aliasDefs;
// entityClass, when given, names the model.
func decodeStreamPlanRequest(body []byte) (*streamdata.Def, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, badStreamDef("the body must be a QueryPlanRequest object")
	}
	var r planRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, badStreamDef("the request does not parse: " + err.Error())
	}
	var d *streamdata.Def
	var err error
	if len(r.Def) > 0 {
		if d, err = streamdata.ParseDef(r.Def); err != nil {
			return nil, err
		}
	} else {
		// Build a definition from the pieces: one object so ParseDef reads
		// condition and aliases as it does everywhere.
		var obj []byte
		obj = append(obj, `{"requestClass":`...)
		obj = appendMarshaled(obj, r.EntityClass)
		if len(r.Condition) > 0 {
			obj = append(append(obj, `,"condition":`...), r.Condition...)
		}
		if len(r.AliasDefs) > 0 {
			obj = append(append(obj, `,"aliasDefs":`...), r.AliasDefs...)
		}
		obj = append(obj, '}')
		if d, err = streamdata.ParseDef(obj); err != nil {
			return nil, err
		}
	}
	if r.EntityClass != "" {
		d.RequestClass = r.EntityClass
	}
	return d, nil
}

// encodeStreamPlan renders a query plan: original and optimized, servedBy
// and suggestedIndexes, and pgExplain, pgSql and indexesUsed on
// PostgreSQL, or pgExplain null and explainNote elsewhere (members in name
// order).
func encodeStreamPlan(p *streamdata.QueryPlan) ([]byte, error) {
	out := map[string]any{"original": p.Original, "optimized": p.Optimized, "servedBy": p.ServedBy, "suggestedIndexes": p.Suggested}
	if p.Explained {
		out["pgExplain"] = p.PgExplain
		out["pgSql"] = p.PgSQL
		out["indexesUsed"] = p.IndexesUsed
	} else {
		out["pgExplain"] = nil
		out["explainNote"] = "no EXPLAIN on this engine (memory or sqlite): the original and optimized plan nodes are the plan"
	}
	return json.Marshal(out)
}

// streamFlushEvery is how many rows a page renders between flushes after
// the first (which goes out at once): the writer holds at most this many
// rows (plus its own buffer) whatever the page length, and a client sees
// rows while the engine still reads.
const streamFlushEvery = 64

// writeStreamPage reads the page and renders the StreamDataFetchResult to
// w row by row: the head first, then the rows, flushed after the first and
// every streamFlushEvery rows, then lastRowIndexPosition. On an error the
// rows written so far stay written and the object is left open: the
// caller ends it.
func writeStreamPage(ctx context.Context, ps *streamdata.PageStream, w *bufio.Writer) error {
	b := make([]byte, 0, 1024)
	b = append(b, `{"pointTime":`...)
	b = strconv.AppendInt(b, ps.PointTime(), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(ps.Offset()), 10)
	b = append(b, `,"pageSize":`...)
	b = strconv.AppendInt(b, int64(ps.PageSize()), 10)
	b = append(b, `,"rows":[`...)
	if _, err := w.Write(b); err != nil {
		return err
	}
	n := 0
	last, err := ps.Rows(ctx, func(r *streamdata.Row) error {
		b = b[:0]
		if n > 0 {
			b = append(b, ',')
		}
		b = appendStreamRow(b, r)
		if _, err := w.Write(b); err != nil {
			return err
		}
		n++
		if n == 1 || n%streamFlushEvery == 0 {
			return w.Flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	b = append(b[:0], `],"lastRowIndexPosition":`...)
	b = strconv.AppendInt(b, int64(last), 10)
	b = append(b, '}')
	_, err = w.Write(b)
	return err
}

// appendStreamRow renders one StreamDataFetchResult row.
func appendStreamRow(b []byte, r *streamdata.Row) []byte {
	b = append(b, `{"key":"`...)
	b = append(b, uuid.UUID(r.ID).String()...)
	b = append(b, `","unitId":null,"sortValues":[`...)
	b = appendStreamValue(b, r.Sort)
	b = append(b, `],"columnsValues":{`...)
	for i, c := range r.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, c.Name)
		b = append(b, ':')
		b = appendStreamValue(b, c.Value)
	}
	return append(b, "}}"...)
}

// appendStreamValue renders a row value: null, a string, or what
// json.Marshal writes for it (null if it cannot).
func appendStreamValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case time.Time:
		return strconv.AppendQuote(b, x.UTC().Format(streamTimeLayout))
	}
	return appendMarshaled(b, v)
}
