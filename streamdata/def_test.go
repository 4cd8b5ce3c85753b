package streamdata

import (
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// defSeeds are definitions in every accepted form, and broken ones.
var defSeeds = []string{
	`{"@bean":"com.cyoda.core.streamdata.StreamDataDef","requestClass":"nobel-prize.1",
	 "rangeCondition":{"@bean":"com.cyoda.core.conditions.queryable.GreaterThan","fieldName":"creationDate","operation":"GREATER_THAN",
	   "value":{"@type":"java.util.Date","value":"2026-01-01T00:00:00.000+00:00"}},
	 "rangeOrder":"ASC",
	 "condition":{"@bean":"com.cyoda.core.conditions.GroupCondition","operator":"AND","conditions":[
	   {"@bean":"com.cyoda.core.conditions.nonqueryable.IEquals","fieldName":"$.category","operation":"IEQUALS","value":{"@type":"String","value":"physics"}}]},
	 "columns":[{"@bean":"com.cyoda.core.reports.columns.ReportSimpleColumn","name":"id"}],
	 "colDefs":{"@meta":"com.cyoda.core.reports.columndefs.ReportColDef[]","value":[]},"aliasDefs":[]}`,
	`{"requestClass":"m.1","rangeOrder":"DESC","rangeCondition":{"type":"simple","jsonPath":"$.n","operatorType":"BETWEEN","value":[1,5]},
	 "condition":{"type":"group","operator":"OR","conditions":[{"type":"lifecycle","field":"state","operatorType":"EQUALS","value":"NEW"}]},
	 "columns":[{"name":"$.a[*].b","type":"SIMPLE_COLUMN"},{"name":"x","type":"ALIAS"}],
	 "aliasDefs":[{"name":"x","aliasPaths":[{"colDef":"$.a","mapperClass":"NumberMapper"}]}]}`,
	`{"requestClass":"m.1","columns":[{"name":"members.[0]@com#cyoda#tdb#model#treenode#NodeInfo.value@com#cyoda#tdb#model#treenode#PersistedValueMaps.strings.[$.workflow_name]"}]}`,
	`{"requestClass":"m.1","condition":{"@bean":"com.cyoda.core.conditions.nonqueryable.IsChanged","fieldName":"$.n","lookback":1}}`,
	`{"requestClass":"m.1","rangeOrder":"UP"}`,
	`{"condition":{"conditions":{"@meta":"x[]","value":[{"fieldName":"a.b","operation":"LIKE","value":"a%"}]}}}`,
	`[1,2]`,
	`{"condition":{"@bean":"com.cyoda.core.conditions.queryable.Between","fieldName":"$.n","from":1}}`,
}

// FuzzParseDef: any definition parses and is checked, or fails with an
// *apierr.Error; never a panic.
func FuzzParseDef(f *testing.F) {
	for _, s := range defSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDef(data)
		if err != nil {
			if _, ok := apierr.As(err); !ok {
				t.Fatalf("non-API error %T: %v", err, err)
			}
			return
		}
		if err := Check(d); err != nil {
			if _, ok := apierr.As(err); !ok {
				t.Fatalf("non-API check error %T: %v", err, err)
			}
			return
		}
		p, _, err := build(d)
		if err != nil {
			t.Fatalf("Check passed, build failed: %v", err)
		}
		if p.CondJSON != nil && !json.Valid(p.CondJSON) {
			t.Fatalf("compiled condition is not JSON: %s", p.CondJSON)
		}
	})
}

func TestParseDefForms(t *testing.T) {
	d, err := ParseDef([]byte(defSeeds[0]))
	if err != nil {
		t.Fatal(err)
	}
	p, spec, err := build(d)
	if err != nil {
		t.Fatal(err)
	}
	if spec != "@creationDate" || !strings.Contains(string(p.CondJSON), `"IEQUALS"`) || !strings.Contains(string(p.CondJSON), `"lifecycle"`) {
		t.Fatalf("spec %q cond %s", spec, p.CondJSON)
	}
	d, err = ParseDef([]byte(defSeeds[1]))
	if err != nil {
		t.Fatal(err)
	}
	p, spec, err = build(d)
	if err != nil {
		t.Fatal(err)
	}
	if spec != "n:desc" || !strings.Contains(string(p.CondJSON), `"BETWEEN_INCLUSIVE","value":[1,5]`) {
		t.Fatalf("spec %q cond %s", spec, p.CondJSON)
	}
	d, err = ParseDef([]byte(defSeeds[2]))
	if err != nil {
		t.Fatal(err)
	}
	if p, _, err = build(d); err != nil || p.cols[0].paths[0].path != "$.workflow_name" {
		t.Fatalf("value-map path: %v %+v", err, p)
	}
	// Joda Between is exclusive: two strict bounds.
	d, err = ParseDef([]byte(`{"requestClass":"m.1","condition":{"@bean":"com.cyoda.core.conditions.queryable.Between","fieldName":"$.n","from":1,"to":{"@type":"java.lang.Integer","value":3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p, _, err = build(d); err != nil || !strings.Contains(string(p.CondJSON), `"GREATER_THAN","value":1`) ||
		!strings.Contains(string(p.CondJSON), `"LESS_THAN","value":3`) {
		t.Fatalf("between: %v %s", err, p.CondJSON)
	}
	for i, bad := range defSeeds[3:] {
		d, err := ParseDef([]byte(bad))
		if err == nil {
			err = Check(d)
		}
		if err == nil && i != 2 {
			t.Errorf("seed %d accepted", i+3)
		}
	}
}

func TestResolvePath(t *testing.T) {
	for in, want := range map[string]string{
		"$.a.b": "$.a.b", ".a.b": "$.a.b", "a.b": "$.a.b", "a[*].b": "$.a[*].b", "a.['k']": "$.a.k",
		"values@org#cyoda#X.strings.[$.name]": "$.name", "state": "state",
	} {
		r, err := resolvePath(in, 1)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got := r.path
		if r.meta != "" {
			got = r.meta
		}
		if got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
	if _, err := resolvePath("a.b", 2); err == nil {
		t.Fatal("a two-hop path was accepted")
	}
}
