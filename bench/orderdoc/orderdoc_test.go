package orderdoc

import (
	"encoding/json"
	"testing"
)

func TestDocumentsAreValidAndAboutOneKB(t *testing.T) {
	var total int
	fields := map[string]bool{}
	for i := 0; i < 5000; i++ {
		b := Append(nil, i)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("order %d: %v\n%s", i, err, b)
		}
		total += len(b)
		v := AppendVaried(nil, i)
		var mv struct {
			Ext map[string]map[string]any `json:"ext"`
		}
		if err := json.Unmarshal(v, &mv); err != nil || len(mv.Ext) != 1 {
			t.Fatalf("varied %d: %v\n%s", i, err, v)
		}
		for g, f := range mv.Ext {
			for k := range f {
				fields[g+"."+k] = true
			}
		}
	}
	if avg := total / 5000; avg < 900 || avg > 1200 {
		t.Errorf("average order is %d bytes, want about 1 KB", avg)
	}
	if len(fields) != 100 {
		t.Errorf("5000 varied documents carry %d ext fields, want 5 groups x 20", len(fields))
	}
}
