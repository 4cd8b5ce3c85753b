package storage

// SQLValue is one cell of a SQL query result in an engine-neutral form:
// the engine decides how each of its types reads (an exact number, a
// JSON document, text, an array of any depth), and the HTTP adapter only
// encodes these few kinds as NDJSON or CSV, so no driver type or
// database-specific rule travels above storage/.
type SQLValue struct {
	Kind SQLKind
	// Text is the value for every kind but SQLNull and SQLArray: "true" or
	// "false" for SQLBool, an exact JSON number for SQLNumber, a compact
	// JSON document for SQLJSON, the text itself for SQLText.
	Text string
	// Elems are an SQLArray's elements; an element of a multi-dimensional
	// array is itself an SQLArray.
	Elems []SQLValue
}

// SQLKind says how an SQLValue is encoded.
type SQLKind uint8

const (
	// SQLNull is SQL NULL.
	SQLNull SQLKind = iota
	// SQLBool is a boolean: Text is "true" or "false".
	SQLBool
	// SQLNumber is a finite number written exactly as a JSON number.
	SQLNumber
	// SQLText is any value best read as text (strings, instants,
	// durations, non-finite numbers, binary data in a stated encoding).
	SQLText
	// SQLJSON is a JSON document, compact (no newline).
	SQLJSON
	// SQLArray is an array; Elems holds its elements.
	SQLArray
)
