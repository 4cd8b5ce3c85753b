package postgres

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"svc/storage"
)

// A saved SQL schema becomes one PostgreSQL schema holding one
// security_barrier view per visible table. Each view reads either the
// current documents (entities.doc) or, when svc.point_time is set, each
// entity's last revision at that instant, so one setting moves every view
// of a query to the same past instant. Values are extracted by svc_sql.*
// functions (migration 0017) that give NULL for a value of another shape.

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

// The views of a saved schema live in the schema's own database
// (sqlschema_tenantdb.go) and reach svc's through postgres_fdw. In svc's
// database each table becomes two views with opaque names in a schema
// with a random name, columns c1…cN: "now" over the current documents and
// "revs" over every revision with the interval it was the entity's last
// one ([svc_from, svc_to) in Unix nanoseconds; svc_to NULL while it still
// is). The tenant database's view picks one by svc.point_time, a setting
// of the tenant's own session that postgres_fdw does not carry: the
// instant goes to svc's database as a parameter of the remote query.

// entityFilter selects one model of one tenant in entities e.
func entityFilter(tenant string, key storage.ModelKey) string {
	return "e.tenant = " + literal(tenant) + " AND e.model_name = " + literal(key.Name) +
		" AND e.model_version = " + strconv.Itoa(key.Version)
}

// nowSourceSQL selects the current documents of one model of one tenant.
func nowSourceSQL(tenant string, key storage.ModelKey) string {
	return `SELECT e.id AS entity_id, svc_sql.ns_ts(e.created_ns) AS creation_date, svc_sql.ns_ts(e.updated_ns) AS last_update_date,
       e.state, e.doc
  FROM entities e
 WHERE ` + entityFilter(tenant, key) + ` AND NOT e.deleted`
}

// revsSourceSQL selects every revision of one model of one tenant that
// holds a document, with the instant it was written (svc_from) and the
// instant of the entity's next revision (svc_to, NULL for the last). The
// revision read at instant p is the one with svc_from <= p < svc_to: the
// highest version written at or before p, deleted ones left out.
func revsSourceSQL(tenant string, key storage.ModelKey) string {
	return `SELECT e.id AS entity_id, svc_sql.ns_ts(r.created_ns) AS creation_date, svc_sql.ns_ts(r.at_ns) AS last_update_date,
       r.state, convert_from(r.data, 'UTF8')::jsonb AS doc, r.at_ns AS svc_from,
       (SELECT min(n.at_ns) FROM entity_revisions n WHERE n.tenant = r.tenant AND n.id = r.id AND n.version > r.version) AS svc_to
  FROM entities e
  JOIN entity_revisions r ON r.tenant = e.tenant AND r.id = e.id
 WHERE ` + entityFilter(tenant, key) + ` AND r.change_type <> 'DELETED'`
}

// remoteCol names a table's i-th column in svc's database.
func remoteCol(i int) string { return "c" + strconv.Itoa(i+1) }

// withColumns gives a table without columns its entity id, as before.
func withColumns(v storage.SQLView) storage.SQLView {
	if len(v.Columns) == 0 {
		v.Columns = []storage.SQLColumn{{Name: "entity_id", Category: "SPECIAL", Key: "ENTITY_ID"}}
	}
	return v
}

// remoteViewSQL is the CREATE VIEW statement, in svc's database, of one
// table's current rows (revs false) or all its revisions (revs true),
// named schema.name, with columns c1…cN (a point_time column is NULL
// there: the tenant database fills it in).
func remoteViewSQL(schema, name, tenant string, v storage.SQLView, revs bool) (string, error) {
	v = withColumns(v)
	src, extra := nowSourceSQL(tenant, v.Model), []string(nil)
	if revs {
		src, extra = revsSourceSQL(tenant, v.Model), []string{"s.svc_from", "s.svc_to"}
	}
	body, err := viewSelect(v, src, extra)
	if err != nil {
		return "", err
	}
	return "CREATE VIEW " + ident(schema) + "." + ident(name) + " AS\n" + body, nil
}

// viewSelect is the SELECT of one table over source (one row per
// document), its columns named c1…cN, then extra.
func viewSelect(v storage.SQLView, source string, extra []string) (string, error) {
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
	for i, c := range v.Columns {
		expr, err := columnSQL(c, elem, len(levels))
		if err != nil {
			return "", fmt.Errorf("table %s: %w", v.Name, err)
		}
		cols = append(cols, expr+" AS "+remoteCol(i))
	}
	cols = append(cols, extra...)
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(strings.Join(cols, ",\n       "))
	b.WriteString("\n  FROM (" + source + ") s")
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

// tenantViewSQL is the CREATE VIEW statement, in the schema's own
// database, of one table over its two foreign tables (now and revs, in
// schema svc_fdw): the current rows when svc.point_time is unset, else
// the revisions valid at that instant. The instant is an uncorrelated
// subquery, so it is computed once and sent to svc's database as a
// parameter of the remote query, where it selects the revisions; a
// branch whose one-time filter is false is never run.
func tenantViewSQL(schema string, v storage.SQLView, now, revs string) string {
	v = withColumns(v)
	var nowCols, revCols []string
	for i, c := range v.Columns {
		n, r := "f."+remoteCol(i), "f."+remoteCol(i)
		if c.Category == "SPECIAL" && c.Key == "POINT_TIME" {
			n, r = "COALESCE(svc_sql.point_time(), now())", "svc_sql.point_time()"
		}
		nowCols = append(nowCols, n+" AS "+ident(c.Name))
		revCols = append(revCols, r)
	}
	return "CREATE VIEW " + ident(schema) + "." + ident(v.Name) + " WITH (security_barrier) AS\nSELECT " +
		strings.Join(nowCols, ", ") + "\n  FROM svc_fdw." + ident(now) + " f WHERE svc_sql.point_time() IS NULL\nUNION ALL\nSELECT " +
		strings.Join(revCols, ", ") + "\n  FROM svc_fdw." + ident(revs) + " f WHERE svc_sql.point_time() IS NOT NULL" +
		" AND f.svc_from <= (SELECT svc_sql.point_ns()) AND (f.svc_to IS NULL OR f.svc_to > (SELECT svc_sql.point_ns()))"
}

func columnSQL(c storage.SQLColumn, elem string, depth int) (string, error) {
	switch c.Category {
	case "SPECIAL":
		switch c.Key {
		case "ENTITY_ID":
			return "s.entity_id", nil
		case "POINT_TIME":
			return "NULL::timestamptz", nil
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
