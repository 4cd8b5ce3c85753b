package entity

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/buger/jsonparser"
	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/predicate"
	"svc/storage"
)

// ModelCount is one row of GET /entity/stats.
type ModelCount struct {
	Key   storage.ModelKey
	Count int64
}

func (s *Service) count(ctx context.Context, tenant string, key storage.ModelKey, at *time.Time) (int64, error) {
	if at == nil {
		return s.store.Count(ctx, tenant, key)
	}
	by, err := s.store.CountByState(ctx, tenant, key, at)
	var n int64
	for _, c := range by {
		n += c.Count
	}
	return n, err
}

// CountByModel counts live entities of every registered model of the
// tenant, zero counts included, ordered by name and version. at, when set,
// counts as of that instant (svc honours pointInTime on stats, docs/decisions/0014-entities.md).
func (s *Service) CountByModel(ctx context.Context, tenant string, at *time.Time) ([]ModelCount, error) {
	ms, err := s.models.ListModels(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]ModelCount, 0, len(ms))
	for _, m := range ms {
		n, err := s.count(ctx, tenant, m.Key, at)
		if err != nil {
			return nil, err
		}
		out = append(out, ModelCount{m.Key, n})
	}
	return out, nil
}

// CountForModel counts one model's live entities.
func (s *Service) CountForModel(ctx context.Context, tenant string, key storage.ModelKey, at *time.Time) (ModelCount, error) {
	if _, err := s.model(ctx, tenant, key); err != nil {
		return ModelCount{}, err
	}
	n, err := s.count(ctx, tenant, key, at)
	return ModelCount{key, n}, err
}

// StateFilter selects states; a nil filter selects all.
type StateFilter []string

// CheckStates enforces the 1000-entry cap of the states filter.
func CheckStates(states []string) error {
	if len(states) > MaxStates {
		return apierr.New(apierr.BadRequest, "states filter has "+strconv.Itoa(len(states))+" entries; maximum is 1000")
	}
	return nil
}

func (f StateFilter) keep(state string) bool {
	if f == nil {
		return true
	}
	for _, s := range f {
		if s == state {
			return true
		}
	}
	return false
}

// CountByState counts live entities per (model, state) over every model of
// the tenant (key nil) or one model; only non-zero pairs, ordered by
// model name, version and state.
func (s *Service) CountByState(ctx context.Context, tenant string, key *storage.ModelKey, filter StateFilter, at *time.Time) ([]storage.StateCount, error) {
	var keys []storage.ModelKey
	if key != nil {
		if _, err := s.model(ctx, tenant, *key); err != nil {
			return nil, err
		}
		keys = []storage.ModelKey{*key}
	} else {
		ms, err := s.models.ListModels(ctx, tenant)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			keys = append(keys, m.Key)
		}
	}
	out := []storage.StateCount{}
	for _, k := range keys {
		by, err := s.store.CountByState(ctx, tenant, k, at)
		if err != nil {
			return nil, err
		}
		for _, c := range by {
			if filter.keep(c.State) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// GroupedQuery is a grouped statistics query, decoded by the adapter.
type GroupedQuery struct {
	GroupBy []string
	// Condition is a condition document (nil or empty: every entity),
	// parsed against the model.
	Condition    json.RawMessage
	Aggregations []AggregationSpec
	At           *time.Time // nil: now
	Limit        *int
}

// AggregationSpec is one requested aggregation.
type AggregationSpec struct {
	Op    string `json:"op"`
	Field string `json:"field"`
	As    string `json:"as"`
}

// GroupKeyPart is one element of a bucket's groupKey; Value nil is null.
type GroupKeyPart struct {
	Path  string
	Value *string
}

// Bucket is one group of a grouped-statistics answer.
type Bucket struct {
	Key   []GroupKeyPart
	Count int64
	// Aggs follows the request's aggregations; nil is null.
	Aggs []*float64
}

// Grouped is the answer: aliases name Aggs columns.
type Grouped struct {
	Aliases []string
	Buckets []Bucket
}

func statsErr(code apierr.Code, msg string) error { return apierr.New(code, msg) }

// normPath turns $['a']['b'] into $.a.b.
func normPath(p string) string {
	if !strings.Contains(p, "['") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		if strings.HasPrefix(p[i:], "['") {
			if j := strings.Index(p[i+2:], "']"); j >= 0 {
				b.WriteByte('.')
				b.WriteString(p[i+2 : i+2+j])
				i += j + 4
				continue
			}
		}
		b.WriteByte(p[i])
		i++
	}
	return b.String()
}

func pathKeys(p string) ([]string, bool) {
	if !strings.HasPrefix(p, "$.") || strings.ContainsAny(p, "[]") {
		return nil, false
	}
	ks := strings.Split(p[2:], ".")
	for _, k := range ks {
		if k == "" {
			return nil, false
		}
	}
	return ks, true
}

type aggCol struct {
	op   string
	keys []string
}

type aggState struct {
	n              int64
	sum, sq        float64
	min, max, mean float64
}

// GroupedStats serves the grouped statistics query over one model's live
// entities (as of pointInTime when given). More distinct groups than
// SVC_STATS_GROUP_MAX is 422 GROUP_CARDINALITY_EXCEEDED, whatever the limit.
func (s *Service) GroupedStats(ctx context.Context, tenant string, key storage.ModelKey, req *GroupedQuery) (*Grouped, error) {
	at := req.At
	if len(req.GroupBy) == 0 {
		return nil, statsErr(apierr.MissingGroupBy, "groupBy needs at least one entry")
	}
	paths := make([]string, len(req.GroupBy))
	gkeys := make([][]string, len(req.GroupBy))
	seen := map[string]bool{}
	for i, g := range req.GroupBy {
		p := normPath(strings.TrimSpace(g))
		if p != "state" {
			ks, ok := pathKeys(p)
			if !ok {
				return nil, statsErr(apierr.InvalidGroupByPath, "invalid groupBy path: "+g)
			}
			gkeys[i] = ks
		}
		if seen[p] {
			return nil, statsErr(apierr.DuplicateGroupBy, "duplicate groupBy entry: "+p)
		}
		seen[p], paths[i] = true, p
	}
	var aliases []string
	var cols []aggCol
	pairs := map[string]bool{}
	byAlias := map[string]string{}
	for _, a := range req.Aggregations {
		switch a.Op {
		case "sum", "avg", "min", "max", "stdev":
		default:
			return nil, statsErr(apierr.InvalidAggregationOp, "unknown aggregation op: "+a.Op)
		}
		f := normPath(a.Field)
		ks, ok := pathKeys(f)
		if !ok {
			return nil, statsErr(apierr.InvalidAggregationField, "invalid aggregation field: "+a.Field)
		}
		pair := a.Op + "\x00" + f
		alias := a.As
		if alias == "" {
			alias = a.Op + "_" + f[2:]
		}
		if pairs[pair] {
			continue // an identical pair: the first alias wins
		}
		if prev, ok := byAlias[alias]; ok && prev != pair {
			return nil, statsErr(apierr.DuplicateAggregationAlias, "alias "+alias+" names two aggregations")
		}
		pairs[pair], byAlias[alias] = true, pair
		aliases = append(aliases, alias)
		cols = append(cols, aggCol{a.Op, ks})
	}
	if req.Limit != nil && (*req.Limit <= 0 || *req.Limit > s.groupMax) {
		return nil, statsErr(apierr.InvalidLimit, "limit must be positive and <= "+strconv.Itoa(s.groupMax))
	}
	if _, err := s.model(ctx, tenant, key); err != nil {
		return nil, err
	}
	var cond *predicate.Condition
	if hasCondition(req.Condition) {
		c, err := s.condition(ctx, tenant, key, req.Condition)
		if err != nil {
			return nil, err
		}
		cond = c
	}
	type group struct {
		key  []GroupKeyPart
		n    int64
		aggs []aggState
	}
	groups := map[string]*group{}
	var kb []byte
	parts := make([]GroupKeyPart, len(paths))
	errTooMany := statsErr(apierr.GroupCardinalityExceeded, "more than "+strconv.Itoa(s.groupMax)+" groups")
	err := s.scanMatching(ctx, tenant, key, at, cond, func(e *storage.Entity) error {
		kb = kb[:0]
		for i, p := range paths {
			var v *string
			if p == "state" {
				if e.State != "" {
					st := e.State
					v = &st
				}
			} else {
				v = scalarAt(e.Data, gkeys[i])
			}
			parts[i] = GroupKeyPart{p, v}
			if v == nil {
				kb = append(kb, 0)
			} else {
				kb = append(kb, 1)
				kb = append(kb, *v...)
				kb = append(kb, 0)
			}
		}
		g := groups[string(kb)]
		if g == nil {
			if len(groups) >= s.groupMax {
				return errTooMany
			}
			g = &group{key: append([]GroupKeyPart(nil), parts...), aggs: make([]aggState, len(cols))}
			groups[string(kb)] = g
		}
		g.n++
		for i, c := range cols {
			raw, dt, _, err := jsonparser.Get(e.Data, c.keys...)
			if err != nil || dt != jsonparser.Number {
				continue
			}
			x, err := strconv.ParseFloat(string(raw), 64)
			if err != nil {
				continue
			}
			st := &g.aggs[i]
			if st.n == 0 || x < st.min {
				st.min = x
			}
			if st.n == 0 || x > st.max {
				st.max = x
			}
			st.n++
			st.sum += x
			d := x - st.mean
			st.mean += d / float64(st.n)
			st.sq += d * (x - st.mean)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &Grouped{Aliases: aliases, Buckets: make([]Bucket, 0, len(groups))}
	for _, g := range groups {
		b := Bucket{Key: g.key, Count: g.n}
		for i, c := range cols {
			st := g.aggs[i]
			var v float64
			switch {
			case st.n == 0, c.op == "stdev" && st.n < 2:
				b.Aggs = append(b.Aggs, nil)
				continue
			case c.op == "sum":
				v = st.sum
			case c.op == "avg":
				v = st.sum / float64(st.n)
			case c.op == "min":
				v = st.min
			case c.op == "max":
				v = st.max
			case c.op == "stdev":
				v = math.Sqrt(st.sq / float64(st.n-1))
			}
			b.Aggs = append(b.Aggs, &v)
		}
		out.Buckets = append(out.Buckets, b)
	}
	sort.Slice(out.Buckets, func(i, j int) bool {
		a, b := out.Buckets[i], out.Buckets[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		for k := range a.Key {
			x, y := a.Key[k].Value, b.Key[k].Value
			switch {
			case x == nil && y == nil:
				continue
			case x == nil:
				return true
			case y == nil:
				return false
			case *x != *y:
				return *x < *y
			}
		}
		return false
	})
	if req.Limit != nil && len(out.Buckets) > *req.Limit {
		out.Buckets = out.Buckets[:*req.Limit]
	}
	return out, nil
}

// scalarAt is the group value of a path: a string's text, a number's or
// boolean's JSON text, nil for absent, null, objects and arrays.
func scalarAt(doc []byte, keys []string) *string {
	raw, dt, _, err := jsonparser.Get(doc, keys...)
	if err != nil {
		return nil
	}
	var v string
	switch dt {
	case jsonparser.String:
		s, err := jsonparser.ParseString(raw)
		if err != nil {
			return nil
		}
		v = s
	case jsonparser.Number, jsonparser.Boolean:
		v = string(raw)
	default:
		return nil
	}
	return &v
}
