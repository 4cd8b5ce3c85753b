package fast

import (
	"bufio"
	"context"
	"encoding/csv"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/platform/apierr"
	"svc/storage"
)

// SQL access extensions (issue 17): POST {ctx}/sql/query runs one
// read-only statement over a saved schema's views; the credentials
// operations hand a tenant admin the schema's PostgreSQL login for psql
// and BI tools.

func sqlExtensionRoutes() []Route {
	return []Route{
		{"POST", "/sql/query", "sqlQuery", TagSQL, "Run a read-only SQL statement over a saved schema's views", Authenticated, nil},
		{"GET", "/sql/credentials", "sqlCredentials", TagSQL, "PostgreSQL login of a saved schema's read-only role", Admin, nil},
		{"POST", "/sql/credentials/rotate", "sqlCredentialsRotate", TagSQL, "Issue a new password for a saved schema's read-only role", Admin, nil},
	}
}

func sqlExtensionDocs() map[string]opDoc {
	name := queryReq("schemaName", "The saved SQL schema.", &Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(1024)})
	login := obj("A PostgreSQL login for psql and BI tools: connect to `database` as `role`; `search_path` is already `schema`.", Props{
		"role": str(""), "password": str(""), "schema": str(""), "database": str(""),
	}, "role", "password", "schema", "database")
	pg501 := e(501, "NOT_IMPLEMENTED_BY_BACKEND: the memory and sqlite backends have no SQL.")
	return map[string]opDoc{
		"sqlQuery": {
			desc: "One SQL statement over the views of a saved SQL schema, run read-only as the schema's own PostgreSQL role " +
				"(no access to base tables or other tenants) under SVC_SQL_QUERY_TIMEOUT. Rows stream as NDJSON, one JSON object per row " +
				"keyed by column name; with `Accept: text/csv` as CSV with a header line. `pointTime` reads every view as of that instant. " +
				"An error after the first rows were sent ends the stream with a line `{\"error\": …}` (CSV: a last line `# error: …`). " +
				"Values: numbers exact (NaN and ±Infinity as strings), json/jsonb embedded, arrays nested to their dimensions, " +
				"timestamptz RFC 3339 in UTC, infinity/-infinity as those words, interval as an ISO 8601 duration, bytea as `\\x` hex, " +
				"other types (ranges, tsvector, …) as PostgreSQL's text; `svc help sql` lists them.",
			body: jsonBody("The statement.", obj("", Props{
				"schemaName": &Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(1024)},
				"sql":        str("One SQL statement (no parameters)."),
				"pointTime":  &Schema{Type: SchemaType{"string"}, Format: "date-time", Description: "Read as of this instant (RFC 3339)." + instantRangeDoc},
			}, "schemaName", "sql"), true),
			ok: &Response{
				Description: "Rows (application/x-ndjson, or text/csv).",
				Content: map[string]*MediaType{
					"application/x-ndjson": {Schema: &Schema{Type: SchemaType{"object"}}},
					"text/csv":             {Schema: &Schema{Type: SchemaType{"string"}}},
				},
			},
			errs: []errDoc{e(400, "BAD_REQUEST, or SQL_ERROR with PostgreSQL's message and properties.sqlState."), e(404, "NOT_FOUND: no such schema."),
				e(429, "SQL_TENANT_CONNECTIONS_BUSY: the tenant's queries hold SVC_SQL_MAX_CONNECTIONS_PER_TENANT connections; retry after Retry-After seconds."),
				e(503, "SQL_CONNECTIONS_BUSY: svc's SVC_SQL_MAX_CONNECTIONS SQL connections are all in use; retry after Retry-After seconds."), pg501},
		},
		"sqlCredentials": {
			desc:   "The login of the schema's read-only PostgreSQL role (a password is issued on first use). Tenant admins only.",
			params: []*Parameter{name},
			ok:     okJSON("The login.", login),
			errs:   []errDoc{e(404, "NOT_FOUND: no such schema."), pg501},
		},
		"sqlCredentialsRotate": {
			desc:   "Issue a new password for the schema's read-only role; the old one stops working. Tenant admins only.",
			params: []*Parameter{name},
			ok:     okJSON("The new login.", login),
			errs:   []errDoc{e(404, "NOT_FOUND: no such schema."), pg501},
		},
	}
}

func sqlQueryHandlers(s *Server) map[string]fasthttp.RequestHandler {
	svc := s.deps.SQLSchema
	if svc == nil {
		return nil
	}
	creds := func(rotate bool) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			if !ctx.QueryArgs().Has("schemaName") {
				s.writeError(ctx, apierr.New(apierr.BadRequest, "query parameter 'schemaName' is required", apierr.P("parameter", "schemaName")))
				return
			}
			l, err := svc.Credentials(dctx(ctx), PrincipalOf(ctx).TenantID, string(ctx.QueryArgs().Peek("schemaName")), rotate)
			if err != nil {
				s.writeError(ctx, err)
				return
			}
			ctx.Response.Header.Set("Cache-Control", "no-store")
			s.writeJSON(ctx, l)
		}
	}
	return map[string]fasthttp.RequestHandler{
		"sqlCredentials":       creds(false),
		"sqlCredentialsRotate": creds(true),
		"sqlQuery": func(ctx *fasthttp.RequestCtx) {
			// The cursor outlives the handler (rows stream after it
			// returns), so it gets its own context, bounded generously
			// past the statement timeout.
			qctx, cancel := context.WithTimeout(context.Background(), s.cfg.SQLQueryTimeout+time.Minute)
			cur, err := svc.Query(qctx, PrincipalOf(ctx).TenantID, ctx.PostBody())
			if err != nil {
				cancel()
				s.writeError(ctx, err)
				if st := ctx.Response.StatusCode(); st == 429 || st == 503 {
					// Past a connection bound (sqlschema.busy): nothing was
					// queued; a query slot frees within a statement's time.
					ctx.Response.Header.Set("Retry-After", "1")
				}
				return
			}
			asCSV := strings.Contains(string(ctx.Request.Header.Peek("Accept")), "text/csv")
			if asCSV {
				ctx.SetContentType("text/csv; charset=utf-8")
			} else {
				ctx.SetContentType("application/x-ndjson")
			}
			ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
				defer cancel()
				defer cur.Close()
				if asCSV {
					writeCSVRows(w, cur.Columns(), cur.Next, svc.RowError)
				} else {
					writeNDJSONRows(w, cur.Columns(), cur.Next, svc.RowError)
				}
				_ = w.Flush()
			})
		},
	}
}

func writeNDJSONRows(w *bufio.Writer, cols []string, next func() ([]storage.SQLValue, error), mapErr func(error) error) {
	keys := make([][]byte, len(cols))
	for i, c := range cols {
		keys[i] = appendJSONString(nil, c)
	}
	var b []byte
	for {
		row, err := next()
		if err != nil {
			b, _ := json.Marshal(map[string]string{"error": errText(mapErr(err))})
			w.Write(b)
			w.WriteByte('\n')
			return
		}
		if row == nil {
			return
		}
		b = append(b[:0], '{')
		for i, v := range row {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, keys[i]...)
			b = append(b, ':')
			b = appendSQLJSON(b, v)
		}
		b = append(b, "}\n"...)
		w.Write(b)
	}
}

func writeCSVRows(w *bufio.Writer, cols []string, next func() ([]storage.SQLValue, error), mapErr func(error) error) {
	cw := csv.NewWriter(w)
	_ = cw.Write(cols)
	rec := make([]string, len(cols))
	for {
		row, err := next()
		if err != nil {
			cw.Flush()
			w.WriteString("# error: " + strings.ReplaceAll(errText(mapErr(err)), "\n", " ") + "\n")
			return
		}
		if row == nil {
			cw.Flush()
			return
		}
		for i, v := range row {
			rec[i] = sqlCSVText(v)
		}
		_ = cw.Write(rec)
	}
}

func errText(err error) string {
	if e, ok := apierr.As(err); ok {
		return e.Message
	}
	return "internal error"
}

// appendSQLJSON writes one cell as JSON: NULL as null, booleans and
// numbers bare (numbers exactly as the engine wrote them), JSON documents
// embedded, arrays nested to their dimensions, everything else a string.
func appendSQLJSON(b []byte, v storage.SQLValue) []byte {
	switch v.Kind {
	case storage.SQLNull:
		return append(b, "null"...)
	case storage.SQLBool, storage.SQLNumber, storage.SQLJSON:
		return append(b, v.Text...)
	case storage.SQLArray:
		b = append(b, '[')
		for i, e := range v.Elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendSQLJSON(b, e)
		}
		return append(b, ']')
	}
	return appendJSONString(b, v.Text)
}

// sqlCSVText is one cell as a CSV field: NULL empty, arrays as their JSON
// text (so dimensions survive), everything else its text.
func sqlCSVText(v storage.SQLValue) string {
	switch v.Kind {
	case storage.SQLNull:
		return ""
	case storage.SQLArray:
		return string(appendSQLJSON(nil, v))
	}
	return v.Text
}
