package fast

import (
	"io"
	"log/slog"
	"testing"

	"svc/platform/config"
)

// BenchmarkAccessLog is the help-topic request with SVC_ACCESS_LOG off and
// on (text and JSON lines to io.Discard): the access line's own cost.
func BenchmarkAccessLog(b *testing.B) {
	for _, c := range []struct {
		name   string
		on     bool
		format string
	}{{"off", false, "text"}, {"text", true, "text"}, {"json", true, "json"}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := config.Defaults()
			cfg.AccessLog = c.on
			var h slog.Handler = slog.NewTextHandler(io.Discard, nil)
			if c.format == "json" {
				h = slog.NewJSONHandler(io.Discard, nil)
			}
			s, err := New(cfg, Deps{Log: slog.New(h)})
			if err != nil {
				b.Fatal(err)
			}
			benchRequest(b, s, "GET", "/api/help/cli")
		})
	}
}
