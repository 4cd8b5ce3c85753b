package sqlschema

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
)

// MaxNameLen bounds table and field names (the UI's limit).
const MaxNameLen = 128

// validName is the UI's rule for table and field names.
var validName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,127}$`)

// reserved DATA names collide with SPECIAL, ROOT and INDEX columns; a DATA
// field named like one gets a leading '_' (docs/decisions/0024-sql-schema.md).
var reserved = map[string]bool{"index": true, "entity_id": true, "point_time": true,
	"creation_date": true, "last_update_date": true, "state": true, "entity": true}

// legalName turns raw text into a name that meets validName: lowercase,
// every other character '_', a leading digit prefixed, long names cut with
// a hash of the whole so two long names stay apart.
func legalName(raw string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(raw) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "_" + s
	}
	if len(s) > MaxNameLen {
		h := sha256.Sum256([]byte(raw))
		s = s[:MaxNameLen-9] + "_" + hex.EncodeToString(h[:4])
	}
	return s
}

// uniqueNames hands out names unique within one scope, suffixing _2, _3…
type uniqueNames map[string]bool

func (u uniqueNames) take(name string) string {
	if !u[name] {
		u[name] = true
		return name
	}
	for i := 2; ; i++ {
		suf := "_" + strconv.Itoa(i)
		base := name
		if len(base)+len(suf) > MaxNameLen {
			base = base[:MaxNameLen-len(suf)]
		}
		if c := base + suf; !u[c] {
			u[c] = true
			return c
		}
	}
}

// PGIdent maps a schema's table or field name to a PostgreSQL identifier
// (at most 63 bytes, NAMEDATALEN): names that fit are used as they are;
// longer ones are cut and given a hash of the whole, so distinct names stay
// distinct.
func PGIdent(name string) string {
	if len(name) <= 63 {
		return name
	}
	h := sha256.Sum256([]byte(name))
	return name[:54] + "_" + hex.EncodeToString(h[:4])
}
