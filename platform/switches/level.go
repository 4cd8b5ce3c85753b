package switches

import (
	"bytes"
	"log/slog"
	"strings"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
)

// levelName is the wire name of l: debug, info, warn or error.
func levelName(l slog.Level) string {
	switch {
	case l <= slog.LevelDebug:
		return "debug"
	case l <= slog.LevelInfo:
		return "info"
	case l <= slog.LevelWarn:
		return "warn"
	}
	return "error"
}

// parseLevel reads a level name case-insensitively (`warning` is `warn`, as
// SVC_LOG_LEVEL accepts); anything else is info, as the compatible system
// answers.
func parseLevel(s string) slog.Level {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// LevelView is the body of GET {ctx}/admin/log-level and, with Previous,
// of the POST.
type LevelView struct {
	Level    string `json:"level"`
	Previous string `json:"previous,omitempty"`
}

// ParseLevelBody reads the POST body {"level": string}: the member is
// required and must be a string (400 BAD_REQUEST otherwise); an unknown
// name means info.
func ParseLevelBody(body []byte) (string, error) {
	var in struct {
		Level *string `json:"level"`
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return "", apierr.New(apierr.BadRequest, "request body is required: {\"level\": \"debug|info|warn|error\"}")
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return "", apierr.New(apierr.BadRequest, "invalid request body: "+err.Error())
	}
	if in.Level == nil {
		return "", apierr.New(apierr.BadRequest, "level is required", apierr.P("parameter", "level"))
	}
	return levelName(parseLevel(*in.Level)), nil
}
