package streamdata

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/storage"
)

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// metaValue is an entity-level column's value.
func metaValue(e *storage.Entity, name string) any {
	switch name {
	case "id":
		return uuid.UUID(e.ID).String()
	case "state":
		return e.State
	case "creationDate":
		return e.CreatedAt.UTC().Format(timeLayout)
	case "lastUpdateTime":
		return e.UpdatedAt.UTC().Format(timeLayout)
	case "previousTransition", "transitionForLatestSave":
		return e.Transition
	case "transactionId":
		return uuid.UUID(e.TxID).String()
	case "entityModelName":
		return e.Model.Name
	case "entityModelVersion":
		return e.Model.Version
	}
	return nil
}

// decode reads a document keeping numbers exact; a document that does not
// decode reads as absent.
func decode(data []byte) any {
	if len(data) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

func (r ref) of(e *storage.Entity, doc any) any {
	if r.meta != "" {
		return metaValue(e, r.meta)
	}
	return r.value(doc)
}

// mapValue applies an alias mapper; nil means "no value" (the next path
// of the alias is tried).
func mapValue(m string, v any) any {
	if v == nil {
		return nil
	}
	switch m {
	case "NumberMapper":
		if s, ok := v.(string); ok {
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				return json.Number(s)
			}
			return nil
		}
	case "StringToIntegerMapper":
		if s, ok := v.(string); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return nil
			}
			return n
		}
	case "BooleanMapper":
		switch x := v.(type) {
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return nil
			}
			return b
		case json.Number:
			f, _ := x.Float64()
			return f != 0
		}
	case "ListToStringMapper":
		if arr, ok := v.([]any); ok {
			parts := make([]string, 0, len(arr))
			for _, x := range arr {
				switch y := x.(type) {
				case string:
					parts = append(parts, y)
				default:
					b, _ := json.Marshal(y)
					parts = append(parts, string(b))
				}
			}
			return strings.Join(parts, ", ")
		}
	}
	return v
}

// appendRow renders one StreamDataFetchResult row.
func (p *Plan) appendRow(b []byte, e *storage.Entity) []byte {
	var doc any
	if p.docCols || p.rangeRef.meta == "" {
		doc = decode(e.Data)
	}
	b = append(b, `{"key":"`...)
	b = append(b, uuid.UUID(e.ID).String()...)
	b = append(b, `","unitId":null,"sortValues":[`...)
	b = appendValue(b, p.rangeRef.of(e, doc))
	b = append(b, `],"columnsValues":{`...)
	for i, c := range p.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, c.name)
		b = append(b, ':')
		var v any
		for j, r := range c.paths {
			if v = mapValue(c.maps[j], r.of(e, doc)); v != nil {
				break
			}
		}
		b = appendValue(b, v)
	}
	return append(b, "}}"...)
}

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		enc, err := json.Marshal(x)
		if err != nil {
			return append(b, "null"...)
		}
		return append(b, enc...)
	case time.Time:
		return strconv.AppendQuote(b, x.UTC().Format(timeLayout))
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}
