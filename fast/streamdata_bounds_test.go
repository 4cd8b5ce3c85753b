package fast

import (
	"fmt"
	"strings"
	"testing"
)

// Row positions (offset, fromPosIndex) out of range are 400 naming the
// field before any row; before the fix 2^63-1 answered 200 with an in-band
// SERVER_ERROR, and -1 named "offset" for either field.
func TestStreamDataPositionBounds(t *testing.T) {
	t.Parallel()
	for _, engine := range entityEngines {
		t.Run(engine, func(t *testing.T) {
			e := newStreamEnv(t, engine)
			e.seedStream("t1", 3, 3)
			def := jodaDef("sd.1", "GreaterThanEquals", "0", "ASC", "")
			for _, field := range []string{"offset", "fromPosIndex"} {
				for _, c := range []struct {
					value string
					ok    bool
				}{
					{"0", true},
					{"2", true},
					{"null", true},
					{"9007199254740991", true}, // 2^53-1, the largest position
					{"9007199254740992", false},
					{"9223372036854775807", false}, // 2^63-1
					{"9223372036854775808", false}, // 2^63
					{"-1", false},
					{"-9223372036854775808", false},
					{"123456789012345678901234567890", false},
					{"1e30", false},
					{"1.5", false},
					{`"abc"`, false},
					{`"5"`, false},
					{"true", false},
					{"{}", false},
				} {
					t.Run(field+"="+c.value, func(t *testing.T) {
						body := `{"sdDef":` + def + `,"pointTime":null,"length":2,"` + field + `":` + c.value + `}`
						r := e.with(t).call("t1", "POST", "/platform-api/stream-data/get", []byte(body))
						if c.ok {
							r.ok(t)
							if strings.Contains(string(r.body), `"error"`) || !strings.Contains(string(r.body), `"lastRowIndexPosition"`) {
								t.Fatalf("page incomplete: %s", r.body)
							}
							return
						}
						p := r.problem(t, 400, "BAD_REQUEST")
						if p["field"] != field {
							t.Fatalf("field %v, want %s: %s", p["field"], field, r.body)
						}
						if !strings.Contains(string(r.body), fmt.Sprintf("%s must be", field)) {
							t.Fatalf("detail does not name %s: %s", field, r.body)
						}
					})
				}
			}
		})
	}
}
