package postgres

import (
	"bytes"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"svc/storage"
)

// The rows of POST /sql/query are read in PostgreSQL's text format and
// turned into storage.SQLValue here. The text output is PostgreSQL's own
// canonical form of every type, including the ones a driver decodes
// lossily or not at all (ranges, multiranges, tsvector, geometric and
// network types, enums, composites); only the types that have a natural
// JSON form are converted: booleans, finite numbers (exact), JSON
// documents, arrays (nested to their dimensions), timestamptz (RFC 3339
// in UTC). Output settings are pinned per query (sqlOutputSettings), so
// the text is known: intervals in ISO 8601 (P1DT2H3M4S), bytea in hex
// (\x0102), dates ISO. A value whose text does not have the expected
// shape (the statement changed a setting itself, a year past 9999, BC)
// is passed on as the text PostgreSQL sent: never an error.

// sqlTextResults asks for every result column in text format.
var sqlTextResults = pgx.QueryResultFormats{pgx.TextFormatCode}

// sqlOutputSettings pins the output styles the conversion reads. Only
// output changes: DateStyle 'ISO' keeps the session's day/month input
// order, and IntervalStyle iso_8601 reads input as the default style does.
const sqlOutputSettings = "SET LOCAL datestyle = 'ISO'; SET LOCAL intervalstyle = 'iso_8601'; " +
	"SET LOCAL bytea_output = 'hex'; SET LOCAL extra_float_digits = 1"

// sqlConv is how one type's text becomes a value.
type sqlConv uint8

const (
	convText sqlConv = iota
	convBool
	convInt
	convFloat // float4/float8/numeric: a number unless NaN or ±Infinity
	convJSON
	convTimestamptz
	convTimestamp
	convArray
)

// sqlColumn is the conversion of one result column (or array element).
type sqlColumn struct {
	conv  sqlConv
	delim byte
	elem  *sqlColumn
}

var sqlTypeMap = pgtype.NewMap()

func sqlColumnOf(oid uint32) *sqlColumn {
	switch oid {
	case pgtype.BoolOID:
		return &sqlColumn{conv: convBool}
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID:
		return &sqlColumn{conv: convInt}
	case pgtype.Float4OID, pgtype.Float8OID, pgtype.NumericOID:
		return &sqlColumn{conv: convFloat}
	case pgtype.JSONOID, pgtype.JSONBOID:
		return &sqlColumn{conv: convJSON}
	case pgtype.TimestamptzOID:
		return &sqlColumn{conv: convTimestamptz}
	case pgtype.TimestampOID:
		return &sqlColumn{conv: convTimestamp}
	}
	if t, ok := sqlTypeMap.TypeForOID(oid); ok {
		if ac, ok := t.Codec.(*pgtype.ArrayCodec); ok && ac.ElementType != nil {
			d := ac.Delimiter
			if d == 0 {
				d = ','
			}
			return &sqlColumn{conv: convArray, delim: d, elem: sqlColumnOf(ac.ElementType.OID)}
		}
	}
	return &sqlColumn{conv: convText}
}

func sqlColumnsOf(fds []pgconn.FieldDescription) []*sqlColumn {
	cols := make([]*sqlColumn, len(fds))
	for i, fd := range fds {
		if fd.Format != pgx.TextFormatCode {
			// Not expected (every column is asked for as text); read
			// such a column as text rather than misread binary.
			cols[i] = &sqlColumn{conv: convText}
			continue
		}
		cols[i] = sqlColumnOf(fd.DataTypeOID)
	}
	return cols
}

// value converts one column's raw text; nil is SQL NULL.
func (c *sqlColumn) value(raw []byte) storage.SQLValue {
	if raw == nil {
		return storage.SQLValue{}
	}
	s := string(raw)
	switch c.conv {
	case convBool:
		switch s {
		case "t":
			return storage.SQLValue{Kind: storage.SQLBool, Text: "true"}
		case "f":
			return storage.SQLValue{Kind: storage.SQLBool, Text: "false"}
		}
	case convInt:
		return storage.SQLValue{Kind: storage.SQLNumber, Text: s}
	case convFloat:
		if jsonNumber(s) {
			return storage.SQLValue{Kind: storage.SQLNumber, Text: s}
		}
	case convJSON:
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			return storage.SQLValue{Kind: storage.SQLJSON, Text: b.String()}
		}
	case convTimestamptz:
		return storage.SQLValue{Kind: storage.SQLText, Text: timestamptzText(s)}
	case convTimestamp:
		return storage.SQLValue{Kind: storage.SQLText, Text: timestampText(s)}
	case convArray:
		if v, ok := c.array(s); ok {
			return v
		}
	}
	return storage.SQLValue{Kind: storage.SQLText, Text: s}
}

// jsonNumber reports whether s is a JSON number (PostgreSQL writes finite
// floats and numerics so; NaN and Infinity are not).
func jsonNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	start := i
	n := digits()
	if n == 0 || n > 1 && s[start] == '0' {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// timestamptzText writes an ISO-style timestamptz ("2026-01-02
// 03:04:05.5+02") as RFC 3339 in UTC; infinity, -infinity and what does
// not parse stay as PostgreSQL wrote them.
func timestamptzText(s string) string {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999Z07:00:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(time.RFC3339Nano)
		}
	}
	return s
}

// timestampText writes a timestamp without time zone as ISO 8601 local
// time ("2026-01-02T03:04:05.5", no offset: it has none).
func timestampText(s string) string {
	if _, err := time.Parse("2006-01-02 15:04:05.999999999", s); err == nil {
		return strings.Replace(s, " ", "T", 1)
	}
	return s
}

// array parses PostgreSQL's array text ("{{1,2},{3,4}}", optionally
// preceded by bounds "[0:1]={…}") into nested SQLArray values.
func (c *sqlColumn) array(s string) (storage.SQLValue, bool) {
	if strings.HasPrefix(s, "[") {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return storage.SQLValue{}, false
		}
		s = s[eq+1:]
	}
	p := arrayParser{s: s, delim: c.delim, elem: c.elem}
	v, ok := p.parse()
	if !ok || p.i != len(p.s) {
		return storage.SQLValue{}, false
	}
	return v, true
}

type arrayParser struct {
	s     string
	i     int
	delim byte
	elem  *sqlColumn
}

// parse reads one {…} level.
func (p *arrayParser) parse() (storage.SQLValue, bool) {
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return storage.SQLValue{}, false
	}
	p.i++
	out := storage.SQLValue{Kind: storage.SQLArray, Elems: []storage.SQLValue{}}
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return out, true
	}
	for {
		if p.i >= len(p.s) {
			return storage.SQLValue{}, false
		}
		switch p.s[p.i] {
		case '{':
			v, ok := p.parse()
			if !ok {
				return storage.SQLValue{}, false
			}
			out.Elems = append(out.Elems, v)
		case '"':
			var b strings.Builder
			p.i++
			for {
				if p.i >= len(p.s) {
					return storage.SQLValue{}, false
				}
				ch := p.s[p.i]
				if ch == '"' {
					p.i++
					break
				}
				if ch == '\\' {
					p.i++
					if p.i >= len(p.s) {
						return storage.SQLValue{}, false
					}
					ch = p.s[p.i]
				}
				b.WriteByte(ch)
				p.i++
			}
			out.Elems = append(out.Elems, p.elem.value([]byte(b.String())))
		default:
			start := p.i
			for p.i < len(p.s) && p.s[p.i] != p.delim && p.s[p.i] != '}' {
				p.i++
			}
			tok := p.s[start:p.i]
			if strings.EqualFold(tok, "NULL") {
				out.Elems = append(out.Elems, storage.SQLValue{})
			} else {
				out.Elems = append(out.Elems, p.elem.value([]byte(tok)))
			}
		}
		if p.i >= len(p.s) {
			return storage.SQLValue{}, false
		}
		switch p.s[p.i] {
		case p.delim:
			p.i++
		case '}':
			p.i++
			return out, true
		default:
			return storage.SQLValue{}, false
		}
	}
}
