package storage

import "errors"

// ErrUnstorableText: the engine refused text it cannot hold (a NUL
// character, an unpaired surrogate, bytes that are not UTF-8). Requests
// are checked before they reach storage (fast's text guard,
// platform/jsondoc), so this is a backstop the API reports as 400
// UNSTORABLE_TEXT rather than a 500.
var ErrUnstorableText = errors.New("storage: text the engine cannot store")

// IsUnstorableText reports whether err is the engine refusing text: the
// sentinel, or a PostgreSQL driver error with SQLSTATE 22P05 (a \u0000 or
// an escape jsonb cannot translate) or 22021 (bytes not in the encoding)
// on a path the engine has not translated. The driver error is matched
// through its SQLState method, so no driver type is imported here, and no
// SQLSTATE is matched above storage/.
func IsUnstorableText(err error) bool {
	if errors.Is(err, ErrUnstorableText) {
		return true
	}
	var st interface{ SQLState() string }
	if !errors.As(err, &st) {
		return false
	}
	switch st.SQLState() {
	case "22P05", "22021":
		return true
	}
	return false
}
