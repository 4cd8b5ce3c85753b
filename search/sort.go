package search

import (
	"strconv"
	"strings"

	"svc/platform/apierr"
	"svc/predicate"
	"svc/storage"
)

// DefaultMaxSortKeys applies when SVC_SEARCH_MAX_SORT_KEYS is 0 or below.
const DefaultMaxSortKeys = 16

var metaSort = map[string]storage.SortField{
	"id": storage.SortID, "state": storage.SortState, "creationDate": storage.SortCreated,
	"lastUpdateTime": storage.SortUpdated, "transitionForLatestSave": storage.SortTransition,
	"transactionId": storage.SortTxID,
}

func badSort(msg string) error { return apierr.New(apierr.InvalidFieldPath, msg) }

// parseSort checks the grammar, the cap and duplicates of the sort values
// (docs/decisions/0021-search.md); the schema check comes later (checkSort).
func parseSort(raw []string, max int) ([]storage.SortKey, error) {
	if max <= 0 {
		max = DefaultMaxSortKeys
	}
	if len(raw) > max {
		return nil, badSort("too many sort keys: " + strconv.Itoa(len(raw)) + " (max " + strconv.Itoa(max) + ")")
	}
	keys := make([]storage.SortKey, 0, len(raw))
	seen := map[string]bool{}
	for _, v := range raw {
		spec, desc := v, false
		if i := strings.LastIndexByte(v, ':'); i >= 0 {
			switch v[i+1:] {
			case "asc":
			case "desc":
				desc = true
			default:
				return nil, badSort("invalid sort direction in " + strconv.Quote(v))
			}
			spec = v[:i]
		}
		var k storage.SortKey
		k.Desc = desc
		var id string
		if strings.HasPrefix(spec, "@") {
			name := spec[1:]
			f, ok := metaSort[name]
			if !ok {
				return nil, badSort("unknown meta sort field: " + strconv.Quote(name))
			}
			k.Field, id = f, "@"+name
		} else {
			p := strings.TrimPrefix(spec, "$.")
			segs := strings.Split(p, ".")
			for _, s := range segs {
				if s == "" || strings.IndexFunc(s, func(r rune) bool {
					return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
				}) >= 0 {
					return nil, badSort("invalid sort field: " + strconv.Quote(spec))
				}
			}
			k.Field, k.Path, id = storage.SortData, segs, p
		}
		if seen[id] {
			return nil, badSort("duplicate sort key: " + strconv.Quote(strings.TrimPrefix(spec, "$.")))
		}
		seen[id] = true
		keys = append(keys, k)
	}
	return keys, nil
}

const (
	numericTypes = 1<<predicate.TypeByte | 1<<predicate.TypeShort | 1<<predicate.TypeInteger | 1<<predicate.TypeLong |
		1<<predicate.TypeBigInteger | 1<<predicate.TypeUnboundInteger | 1<<predicate.TypeFloat | 1<<predicate.TypeDouble |
		1<<predicate.TypeBigDecimal | 1<<predicate.TypeUnboundDecimal
	textTypes = 1<<predicate.TypeString | 1<<predicate.TypeCharacter | 1<<predicate.TypeUUID | 1<<predicate.TypeTimeUUID |
		1<<predicate.TypeLocalDate | 1<<predicate.TypeLocalDateTime | 1<<predicate.TypeLocalTime |
		1<<predicate.TypeZonedDateTime | 1<<predicate.TypeYear | 1<<predicate.TypeYearMonth
	boolTypes = 1 << predicate.TypeBoolean
)

// checkSort resolves data keys against the model: a non-array leaf of one
// comparison class.
func checkSort(keys []storage.SortKey, s predicate.Schema) error {
	for i := range keys {
		k := &keys[i]
		if k.Field != storage.SortData {
			continue
		}
		name := strings.Join(k.Path, ".")
		kind, ts := s.Lookup("$." + name)
		if kind != predicate.PathLeaf {
			if ak, _ := s.Lookup("$." + name + "[*]"); ak != predicate.PathUnknown {
				return badSort("cannot sort by array field: " + strconv.Quote(name))
			}
			return badSort("unknown sort field: " + strconv.Quote(name))
		}
		set := uint32(ts) &^ (1 << predicate.TypeNull)
		switch {
		case set == 0:
			k.Class = storage.SortText
		case set&^numericTypes == 0:
			k.Class = storage.SortNumber
		case set&^textTypes == 0:
			k.Class = storage.SortText
		case set&^boolTypes == 0:
			k.Class = storage.SortBool
		default:
			return badSort("sort field " + strconv.Quote(name) + " has types of different kinds " + ts.String())
		}
	}
	return nil
}
