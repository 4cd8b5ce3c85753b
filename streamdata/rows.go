package streamdata

import (
	"bytes"
	"strconv"
	"strings"

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

// Row is one row of a StreamDataFetchResult: the entity's id, its value
// of the range field (the sort value) and the output columns in the
// definition's order. Values are what a decoded document holds (string,
// json.Number, bool, nil, []any, map[string]any) or what a lifecycle
// column or an alias mapper gives (string, int, int64, bool).
type Row struct {
	ID      [16]byte
	Sort    any
	Columns []Cell
}

// Cell is one output column of a row.
type Cell struct {
	Name  string
	Value any
}

// fillRow fills r from entity e, reusing r's column slice.
func (p *Plan) fillRow(r *Row, e *storage.Entity) {
	var doc any
	if p.docCols || p.rangeRef.meta == "" {
		doc = decode(e.Data)
	}
	r.ID = e.ID
	r.Sort = p.rangeRef.of(e, doc)
	r.Columns = r.Columns[:0]
	for _, c := range p.cols {
		var v any
		for j, ref := range c.paths {
			if v = mapValue(c.maps[j], ref.of(e, doc)); v != nil {
				break
			}
		}
		r.Columns = append(r.Columns, Cell{Name: c.name, Value: v})
	}
}
