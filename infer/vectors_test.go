package infer

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

type vector struct {
	Name             string          `json:"name"`
	DocsText         []string        `json:"docsText"`
	Expect           json.RawMessage `json:"expect"`
	LockBeforeExport bool            `json:"lockBeforeExport"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	raw, err := os.ReadFile("../testdata/simple-view-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	// The informational "docs" member was written by a JSON encoder that
	// prints huge numbers as Infinity; the tests read "docsText" only.
	raw = bytes.ReplaceAll(raw, []byte(": Infinity"), []byte(": null"))
	var vs []vector
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

// compact re-encodes JSON without whitespace, keeping key order, so the
// vector file's pretty-printed expectations compare byte for byte.
func compact(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestVectors(t *testing.T) {
	vs := loadVectors(t)
	if len(vs) != 43 {
		t.Fatalf("vector file holds %d vectors, want 43", len(vs))
	}
	sv := simpleViewSchema(t)
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			m := NewModel()
			for _, d := range v.DocsText {
				if err := m.Ingest([]byte(d), Limits{}); err != nil {
					t.Fatalf("ingest %s: %v", d, err)
				}
			}
			got := m.AppendSimpleViewExport(nil, v.LockBeforeExport)
			want := compact(t, v.Expect)
			if !bytes.Equal(got, want) {
				t.Fatalf("export mismatch\n got: %s\nwant: %s", got, want)
			}
			if err := validateJSON(t, sv, got); err != nil {
				t.Fatalf("export violates the SIMPLE_VIEW schema: %v", err)
			}
			back, err := ParseSimpleView(got, Limits{})
			if err != nil {
				t.Fatalf("re-import: %v", err)
			}
			if again := back.AppendSimpleViewExport(nil, v.LockBeforeExport); !bytes.Equal(again, got) {
				t.Fatalf("export→import→export changed\nfirst: %s\nagain: %s", got, again)
			}
		})
	}
}
