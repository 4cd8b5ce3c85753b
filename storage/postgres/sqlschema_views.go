package postgres

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// A saved SQL schema becomes one PostgreSQL schema holding one
// security_barrier view per visible table. Each view embeds the tenant and
// model as literals and reads either the current documents (entities.doc)
// or, when svc.point_time is set, each entity's last revision at that
// instant, so one setting moves every view of a query to the same past
// instant. Values are extracted by svc_sql.* functions (migration 0017)
// that give NULL for a value of another shape.

func ident(s string) string { return pgx.Identifier{s}.Sanitize() }

// literal quotes s as an SQL string literal (standard_conforming_strings
// is on in every supported server, so only quotes need doubling).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// extractFn names the svc_sql function giving a dataType's column type
// from one JSON value; "" keeps the jsonb value.
func extractFn(dataType string) string {
	switch dataType {
	case "STRING", "CHARACTER":
		return "svc_sql.txt"
	case "BYTE", "SHORT", "INTEGER":
		return "svc_sql.int4"
	case "LONG":
		return "svc_sql.int8"
	case "BIG_INTEGER", "UNBOUND_INTEGER", "UNBOUND_DECIMAL":
		return "svc_sql.num"
	case "BIG_DECIMAL":
		return "svc_sql.dec38"
	case "FLOAT", "DOUBLE":
		return "svc_sql.f8"
	case "BOOLEAN":
		return "svc_sql.bool"
	case "LOCAL_DATE", "YEAR_MONTH":
		return "svc_sql.date"
	case "LOCAL_DATE_TIME":
		return "svc_sql.ts"
	case "ZONED_DATE_TIME", "DATE":
		return "svc_sql.tstz"
	case "LOCAL_TIME":
		return "svc_sql.time"
	case "YEAR":
		return "svc_sql.year"
	case "UUID_TYPE", "TIME_UUID_TYPE":
		return "svc_sql.uuid"
	case "BYTE_ARRAY", "BYTE_BUFFER":
		return "svc_sql.bytes"
	}
	return "" // OBJECT, LIST, MAP, SET: the JSON value itself
}

func apply(fn, expr string) string {
	if fn == "" {
		return expr
	}
	return fn + "(" + expr + ")"
}

// navigate appends "-> 'k'" steps for a dotted key (".a.b") to expr.
func navigate(expr, dotted string) string {
	if dotted == "" {
		return expr
	}
	var b strings.Builder
	b.WriteString(expr)
	for _, k := range strings.Split(strings.TrimPrefix(dotted, "."), ".") {
		b.WriteString(" -> ")
		b.WriteString(literal(k))
	}
	return b.String()
}

// sourceSQL selects the documents of one model of one tenant: the current
// ones, or when svc.point_time is set each entity's last revision at or
// before it (deleted ones left out). Both branches carry a one-time filter
// on the setting, so a query runs only one of them.
func sourceSQL(tenant string, key storage.ModelKey) string {
	where := "e.tenant = " + literal(tenant) + " AND e.model_name = " + literal(key.Name) +
		" AND e.model_version = " + strconv.Itoa(key.Version)
	return `SELECT e.id AS entity_id, COALESCE(svc_sql.point_time(), now()) AS point_time,
       svc_sql.ns_ts(e.created_ns) AS creation_date, svc_sql.ns_ts(e.updated_ns) AS last_update_date,
       e.state, e.doc
  FROM entities e
 WHERE ` + where + ` AND NOT e.deleted AND svc_sql.point_time() IS NULL
UNION ALL
SELECT e.id, svc_sql.point_time(), svc_sql.ns_ts(r.created_ns), svc_sql.ns_ts(r.at_ns), r.state,
       convert_from(r.data, 'UTF8')::jsonb
  FROM entities e
 CROSS JOIN LATERAL (SELECT r.created_ns, r.at_ns, r.state, r.data, r.change_type
                       FROM entity_revisions r
                      WHERE r.id = e.id AND r.tenant = e.tenant AND r.at_ns <= svc_sql.point_ns()
                      ORDER BY r.version DESC LIMIT 1) r
 WHERE ` + where + ` AND svc_sql.point_time() IS NOT NULL AND r.change_type <> 'DELETED'`
}

// viewSQL is the CREATE VIEW statement of one table.
func viewSQL(schema, tenant string, v storage.SQLView) (string, error) {
	path := v.Path
	detached := strings.HasSuffix(path, "^")
	var levels []string // the dotted key unnested at each array level
	switch {
	case path == "json" || path == "$":
	case strings.HasPrefix(path, "$") && strings.HasSuffix(strings.TrimSuffix(path, "^"), "[*]"):
		segs := strings.Split(strings.TrimPrefix(strings.TrimSuffix(path, "^"), "$"), "[*]")
		levels = segs[:len(segs)-1]
	default:
		return "", fmt.Errorf("table %s: unsupported uniformedPath %q", v.Name, path)
	}
	elem := "s.doc"
	if len(levels) > 0 {
		elem = "a" + strconv.Itoa(len(levels)) + ".v"
	}
	var cols []string
	for _, c := range v.Columns {
		expr, err := columnSQL(c, elem, len(levels))
		if err != nil {
			return "", fmt.Errorf("table %s: %w", v.Name, err)
		}
		cols = append(cols, expr+" AS "+ident(c.Name))
	}
	if len(cols) == 0 {
		cols = append(cols, "s.entity_id")
	}
	var b strings.Builder
	b.WriteString("CREATE VIEW " + ident(schema) + "." + ident(v.Name) + " WITH (security_barrier) AS\nSELECT ")
	b.WriteString(strings.Join(cols, ",\n       "))
	b.WriteString("\n  FROM (" + sourceSQL(tenant, v.Model) + ") s")
	prev := "s.doc"
	for i, seg := range levels {
		a := "a" + strconv.Itoa(i+1)
		b.WriteString("\n CROSS JOIN LATERAL jsonb_array_elements(svc_sql.arr(" + navigate(prev, seg) + ")) WITH ORDINALITY " + a + "(v, o)")
		prev = a + ".v"
	}
	if len(levels) > 0 {
		kind := "object"
		if detached {
			kind = "array"
		}
		b.WriteString("\n WHERE jsonb_typeof(" + elem + ") = '" + kind + "'")
	}
	return b.String(), nil
}

func columnSQL(c storage.SQLColumn, elem string, depth int) (string, error) {
	switch c.Category {
	case "SPECIAL":
		switch c.Key {
		case "ENTITY_ID":
			return "s.entity_id", nil
		case "POINT_TIME":
			return "s.point_time", nil
		case "JSON":
			return "s.doc", nil
		}
	case "ROOT":
		switch c.Key {
		case "creationDate":
			return "s.creation_date", nil
		case "lastUpdateTime":
			return "s.last_update_date", nil
		case "state":
			return "s.state", nil
		}
	case "INDEX":
		if c.Key == "" {
			var parts []string
			for i := 1; i <= depth; i++ {
				parts = append(parts, "(a"+strconv.Itoa(i)+".o - 1)::integer")
			}
			return "ARRAY[" + strings.Join(parts, ", ") + "]::integer[]", nil
		}
		if i, err := strconv.Atoi(c.Key); err == nil && i >= 0 && i < depth {
			return "(a" + strconv.Itoa(i+1) + ".o - 1)::integer", nil
		}
	case "DATA":
		return dataSQL(c, elem)
	}
	return "", fmt.Errorf("column %s: unsupported %s key %q", c.Name, c.Category, c.Key)
}

// dataSQL extracts a DATA key relative to the node's element: ".a.b",
// ".a[2]" / "[2]" (one position), ".a[*]" / "[*]" (the whole array).
func dataSQL(c storage.SQLColumn, elem string) (string, error) {
	fn := extractFn(c.DataType)
	key := c.Key
	if stem, ok := strings.CutSuffix(key, "[*]"); ok {
		arr := "svc_sql.arr(" + navigate(elem, stem) + ")"
		return "ARRAY(SELECT " + apply(fn, "x.value") + " FROM jsonb_array_elements(" + arr +
			") WITH ORDINALITY x WHERE jsonb_typeof(x.value) NOT IN ('object', 'array') ORDER BY x.ordinality)", nil
	}
	if i := strings.LastIndexByte(key, '['); i >= 0 && strings.HasSuffix(key, "]") {
		n, err := strconv.Atoi(key[i+1 : len(key)-1])
		if err != nil || n < 0 {
			return "", fmt.Errorf("column %s: bad array position in key %q", c.Name, key)
		}
		return apply(fn, navigate(elem, key[:i])+" -> "+strconv.Itoa(n)), nil
	}
	if !strings.HasPrefix(key, ".") {
		return "", fmt.Errorf("column %s: bad data key %q", c.Name, key)
	}
	return apply(fn, navigate(elem, key)), nil
}
