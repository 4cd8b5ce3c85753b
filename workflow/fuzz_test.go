package workflow

import (
	"testing"

	"svc/platform/apierr"
)

// FuzzParseImport feeds arbitrary bodies through the whole import pipeline:
// every input either fails with a catalogue error or yields a stored set
// that decodes, compiles and exports.
func FuzzParseImport(f *testing.F) {
	f.Add(importBody("MERGE", wfJSON("w", "")))
	f.Add([]byte(`{"workflows":[]}`))
	f.Add([]byte(`{"importMode":"replace","allowCycles":true,"workflows":[{"version":"1.5","name":"x","initialState":"A","states":{"A":{"transitions":[{"name":"t","next":"A","manual":false}]}}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseImport(body)
		if err != nil {
			if _, ok := apierr.As(err); !ok {
				t.Fatalf("uncatalogued error %T: %v", err, err)
			}
			return
		}
		res, err := Import(nil, req, nil)
		if err != nil {
			if _, ok := apierr.As(err); !ok {
				t.Fatalf("uncatalogued import error %T: %v", err, err)
			}
			return
		}
		if !res.Changed {
			return
		}
		if _, err := CompileStored(res.Stored); err != nil {
			t.Fatalf("stored set does not compile: %v", err)
		}
		if _, err := Export(res.Stored, "m", 1); err != nil {
			t.Fatalf("stored set does not export: %v", err)
		}
	})
}
