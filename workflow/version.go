package workflow

import (
	"fmt"
	"strconv"
	"strings"

	"svc/platform/apierr"
)

// Schema versions (docs/decisions/0016-workflow-definitions.md). The compatible system accepts 1.1 to 1.3;
// svc also accepts 1.0 (read as 1.1) and 1.4/1.5 so the public client
// templates import unchanged. Export stamps CurrentVersion, the compatible
// system's current version, so exports stay byte-compatible with it.
const (
	CurrentVersion  = "1.3"
	SupportedMajor  = 1
	MinMinorVersion = 0
	MaxMinorVersion = 5
)

// apierr.WorkflowSchemaVersionUnsupported is the error code of every schema version failure.

// CheckVersion validates a workflow's schema version string. The message
// tells malformed, unsupported major, too new and too old apart.
func CheckVersion(workflowName, v string) error {
	fail := func(format string, a ...any) error {
		return apierr.New(apierr.WorkflowSchemaVersionUnsupported,
			fmt.Sprintf("workflow %q: ", workflowName)+fmt.Sprintf(format, a...),
			apierr.P("workflowName", workflowName), apierr.P("version", v),
			apierr.P("supported", fmt.Sprintf("%d.%d-%d.%d", SupportedMajor, MinMinorVersion, SupportedMajor, MaxMinorVersion)))
	}
	if v == "" {
		return fail("schema version is missing; set \"version\":%q", CurrentVersion)
	}
	major, minor, ok := parseVersion(v)
	if !ok {
		return fail("schema version %q is malformed; expected MAJOR.MINOR such as %q", v, CurrentVersion)
	}
	switch {
	case major != SupportedMajor:
		return fail("schema major version %d is not supported; supported versions are %d.%d to %d.%d", major, SupportedMajor, MinMinorVersion, SupportedMajor, MaxMinorVersion)
	case minor > MaxMinorVersion:
		return fail("schema version %q is newer than the newest supported version %d.%d", v, SupportedMajor, MaxMinorVersion)
	case minor < MinMinorVersion:
		return fail("schema version %q is older than the oldest supported version %d.%d", v, SupportedMajor, MinMinorVersion)
	}
	return nil
}

// parseVersion accepts ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ only.
func parseVersion(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(v, ".")
	if !found {
		return 0, 0, false
	}
	major, ok1 := parseComponent(a)
	minor, ok2 := parseComponent(b)
	return major, minor, ok1 && ok2
}

func parseComponent(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
