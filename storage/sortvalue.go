package storage

import (
	"bytes"
	"strconv"

	json "github.com/goccy/go-json"
)

// SortValue is one sort key's value for one entity, as an engine that
// sorts in Go sees it. PostgreSQL sorts the same way in SQL.
type SortValue struct {
	Missing bool
	Num     float64
	Str     string
	Bool    bool
	Int     int64
}

// DataSortValue extracts a data sort key from a JSON document: the value
// at path, of the kind the key's class compares; anything else is missing.
func DataSortValue(doc []byte, k *SortKey) SortValue {
	raw := json.RawMessage(doc)
	for _, seg := range k.Path {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return SortValue{Missing: true}
		}
		v, ok := obj[seg]
		if !ok {
			return SortValue{Missing: true}
		}
		raw = v
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return SortValue{Missing: true}
	}
	switch k.Class {
	case SortNumber:
		if c := raw[0]; c == '-' || (c >= '0' && c <= '9') {
			if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
				return SortValue{Num: f}
			}
		}
	case SortBool:
		switch string(raw) {
		case "true":
			return SortValue{Bool: true}
		case "false":
			return SortValue{}
		}
	default:
		if raw[0] == '"' {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return SortValue{Str: s}
			}
		}
	}
	return SortValue{Missing: true}
}

// MetaSortValue extracts a meta sort key; dates compare at milliseconds
// and an empty text counts as missing.
func MetaSortValue(e *Entity, k *SortKey) SortValue {
	text := func(s string) SortValue {
		if s == "" {
			return SortValue{Missing: true}
		}
		return SortValue{Str: s}
	}
	switch k.Field {
	case SortID:
		return SortValue{Str: string(e.ID[:])}
	case SortTxID:
		return SortValue{Str: string(e.TxID[:])}
	case SortState:
		return text(e.State)
	case SortTransition:
		return text(e.Transition)
	case SortCreated:
		return SortValue{Int: e.CreatedAt.UnixNano() / 1e6}
	case SortUpdated:
		return SortValue{Int: e.UpdatedAt.UnixNano() / 1e6}
	}
	return SortValue{Missing: true}
}

// CompareSort orders a against b for key k: missing last in both
// directions, the direction applied to present values only.
func CompareSort(k *SortKey, a, b SortValue) int {
	if a.Missing || b.Missing {
		switch {
		case a.Missing && b.Missing:
			return 0
		case a.Missing:
			return 1
		default:
			return -1
		}
	}
	c := 0
	switch {
	case k.Field == SortCreated || k.Field == SortUpdated:
		c = cmpInt(a.Int, b.Int)
	case k.Field != SortData || k.Class == SortText:
		c = bytesCompare(a.Str, b.Str)
	case k.Class == SortNumber:
		switch {
		case a.Num < b.Num:
			c = -1
		case a.Num > b.Num:
			c = 1
		}
	case k.Class == SortBool:
		switch {
		case !a.Bool && b.Bool:
			c = -1
		case a.Bool && !b.Bool:
			c = 1
		}
	}
	if k.Desc {
		return -c
	}
	return c
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func bytesCompare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// SortEntities orders es by keys, then id ascending.
func SortEntities(es []*Entity, keys []SortKey) {
	if len(keys) == 0 {
		sortByID(es)
		return
	}
	vals := make(map[*Entity][]SortValue, len(es))
	for _, e := range es {
		vs := make([]SortValue, len(keys))
		for i := range keys {
			if keys[i].Field == SortData {
				vs[i] = DataSortValue(e.Data, &keys[i])
			} else {
				vs[i] = MetaSortValue(e, &keys[i])
			}
		}
		vals[e] = vs
	}
	sortSlice(es, func(a, b *Entity) int {
		va, vb := vals[a], vals[b]
		for i := range keys {
			if c := CompareSort(&keys[i], va[i], vb[i]); c != 0 {
				return c
			}
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
}
