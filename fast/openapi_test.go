package fast

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/pb33f/jsonschema/v6"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/cache"
	vconfig "github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi/datamodel"
	v3high "github.com/pb33f/libopenapi/datamodel/high/v3"

	"svc/platform/config"
)

// servedDoc fetches /openapi.json through the whole middleware chain.
func servedDoc(t *testing.T, s *Server) []byte {
	t.Helper()
	resp := do(s, "GET", "/openapi.json")
	if resp.StatusCode() != 200 || string(resp.Header.ContentType()) != "application/json" {
		t.Fatalf("GET /openapi.json: %d %s", resp.StatusCode(), resp.Header.ContentType())
	}
	return append([]byte(nil), resp.Body()...)
}

func validateOAS(t *testing.T, raw []byte) []string {
	t.Helper()
	return validateOASWith(t, raw, nil)
}

// validateOASWith parses with cfg (nil: libopenapi's defaults). libopenapi
// logs model build errors on stdout as well as returning them; the check of
// a deliberately broken document passes a quiet logger.
func validateOASWith(t *testing.T, raw []byte, cfg *datamodel.DocumentConfiguration) []string {
	t.Helper()
	var doc libopenapi.Document
	var err error
	if cfg == nil {
		doc, err = libopenapi.NewDocument(raw)
	} else {
		doc, err = libopenapi.NewDocumentWithConfiguration(raw, cfg)
	}
	if err != nil {
		return []string{"parse: " + err.Error()}
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		return []string{"libopenapi reads version " + v}
	}
	// Only the document check runs: no schema cache, so NewValidator does
	// not compile every body and parameter schema up front for request and
	// response checks that never come.
	v, errs := validator.NewValidator(doc, vconfig.WithSchemaCache(nil))
	if len(errs) > 0 {
		var out []string
		for _, e := range errs {
			out = append(out, "model: "+e.Error())
		}
		return out
	}
	ok, verrs := v.ValidateDocument()
	var out []string
	for _, e := range verrs {
		line := e.Error()
		for _, f := range e.SchemaValidationErrors {
			line += "\n    " + f.Reason + " at " + f.FieldPath + " (" + f.KeywordLocation + ")"
		}
		out = append(out, line)
	}
	if !ok && len(out) == 0 {
		out = append(out, "invalid, without a reason")
	}
	return out
}

// TestOpenAPIDocumentIsValidOAS31 checks the served document against the
// OpenAPI 3.1 specification schema.
func TestOpenAPIDocumentIsValidOAS31(t *testing.T) {
	t.Parallel()
	raw := servedDoc(t, newTestServer(t))
	for _, e := range validateOAS(t, raw) {
		t.Error(e)
	}

	// The validator must be able to fail, or the check above proves nothing.
	var broken map[string]any
	if err := json.Unmarshal(raw, &broken); err != nil {
		t.Fatal(err)
	}
	broken["paths"].(map[string]any)["/account"].(map[string]any)["get"].(map[string]any)["responses"] = "none"
	b, _ := json.Marshal(broken)
	quiet := datamodel.NewDocumentConfiguration()
	quiet.Logger = slog.New(slog.DiscardHandler)
	if len(validateOASWith(t, b, quiet)) == 0 {
		t.Error("the validator accepted a document whose responses is a string")
	}
}

// TestOpenAPISchemasAreValidJSONSchema compiles every schema of the
// document as JSON Schema 2020-12. The OAS meta-schema leaves schema
// objects unchecked, so this is what catches a bad keyword value or a
// dangling $ref inside a schema.
func TestOpenAPISchemasAreValidJSONSchema(t *testing.T) {
	t.Parallel()
	raw := servedDoc(t, newTestServer(t))
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	defs := map[string]any{}
	for name, s := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		defs[name] = s
	}
	n := 0
	walk(doc["paths"], "", func(key string, v any) {
		if key == "schema" {
			defs["inline"+strconv.Itoa(n)] = v
			n++
		}
	})
	b, _ := json.Marshal(map[string]any{"$defs": defs})
	b = bytes.ReplaceAll(b, []byte(`"#/components/schemas/`), []byte(`"#/$defs/`))
	root, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///schemas.json", root); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := c.Compile("mem:///schemas.json#/$defs/" + name); err != nil {
			t.Errorf("schema %s: %v", name, err)
		}
	}
	if n < 50 {
		t.Errorf("only %d inline schemas in paths; operations lack parameters or bodies", n)
	}
}

// walk calls fn for every object member below v.
func walk(v any, key string, fn func(key string, v any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			fn(k, c)
			walk(c, k, fn)
		}
	case []any:
		for _, c := range x {
			walk(c, key, fn)
		}
	}
}

func TestOpenAPIRefsResolve(t *testing.T) {
	t.Parallel()
	raw := servedDoc(t, newTestServer(t))
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	walk(doc, "", func(key string, v any) {
		if key != "$ref" {
			return
		}
		ref, _ := v.(string)
		used[ref] = true
		var cur any = doc
		for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = m[strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")]
		}
		if !strings.HasPrefix(ref, "#/") || cur == nil {
			t.Errorf("$ref %q does not resolve", ref)
		}
	})
	for name := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		if !used["#/components/schemas/"+name] {
			t.Errorf("component schema %s is never used", name)
		}
	}
}

type oasDoc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Version string `json:"version"`
	} `json:"info"`
	Servers []struct {
		URL string `json:"url"`
	} `json:"servers"`
	Tags []struct {
		Name string `json:"name"`
	} `json:"tags"`
	Security   []map[string][]string              `json:"security"`
	Paths      map[string]map[string]oasOperation `json:"paths"`
	Components struct {
		SecuritySchemes map[string]map[string]any `json:"securitySchemes"`
	} `json:"components"`
}

type oasOperation struct {
	OperationID string                `json:"operationId"`
	Tags        []string              `json:"tags"`
	Summary     string                `json:"summary"`
	Security    []map[string][]string `json:"security"`
	Parameters  []struct {
		Name     string         `json:"name"`
		In       string         `json:"in"`
		Required bool           `json:"required"`
		Schema   map[string]any `json:"schema"`
	} `json:"parameters"`
	RequestBody *struct {
		Required bool                      `json:"required"`
		Content  map[string]map[string]any `json:"content"`
	} `json:"requestBody"`
	Responses map[string]map[string]any `json:"responses"`
}

func decodeDoc(t *testing.T, raw []byte) *oasDoc {
	t.Helper()
	var d oasDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

func TestOpenAPIServerURL(t *testing.T) {
	t.Parallel()
	for _, cp := range []string{"/api", "", "/svc/v1"} {
		s := newTestServer(t, func(c *config.Config) { c.ContextPath = cp })
		d := decodeDoc(t, servedDoc(t, s))
		if len(d.Servers) != 1 || d.Servers[0].URL != "http://svc.test"+cp {
			t.Errorf("context path %q: servers %+v, want http://svc.test%s", cp, d.Servers, cp)
		}
	}

	s := newTestServer(t)
	for host, want := range map[string]string{
		"example.org:8443": "http://example.org:8443/api",
		"[::1]:8080":       "http://[::1]:8080/api",
		`evil"host`:        "http://localhost/api",
		"a<b":              "http://localhost/api",
	} {
		resp := do(s, "GET", "/openapi.json", "Host", host)
		d := decodeDoc(t, resp.Body())
		if d.Servers[0].URL != want {
			t.Errorf("Host %q: servers[0].url %q, want %q", host, d.Servers[0].URL, want)
		}
	}
}

// TestOpenAPIServerURLOverTLS serves over a real TLS listener, so the
// scheme comes from the connection as in production.
func TestOpenAPIServerURLOverTLS(t *testing.T) {
	t.Parallel()
	certPEM, keyPEM := selfSignedCert(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, func(c *config.Config) { c.TLSCertFile, c.TLSKeyFile = certFile, keyFile })
	base, stop := serveLoopback(t, s)
	defer stop()

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	url := strings.Replace(base, "http://", "https://", 1) + "/openapi.json"
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := decodeDoc(t, body)
	want := strings.TrimSuffix(url, "/openapi.json") + "/api"
	if d.Servers[0].URL != want {
		t.Errorf("servers[0].url %q, want %q", d.Servers[0].URL, want)
	}
}

func selfSignedCert(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "svc test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// serveLoopback runs s on 127.0.0.1 and returns its base URL ("http://"
// even when the listener speaks TLS) and a function that stops it.
func serveLoopback(t testing.TB, s *Server) (string, func()) {
	t.Helper()
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adminLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListeners(ctx, apiLn, adminLn, nil) }()
	return "http://" + apiLn.Addr().String(), func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

func TestOpenAPIInfoTagsAndOperations(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	d := decodeDoc(t, servedDoc(t, s))
	if d.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", d.OpenAPI)
	}
	if d.Info.Version != "1.0" {
		t.Errorf("info.version %q, want 1.0", d.Info.Version)
	}

	groups := []string{TagEntity, TagModel, TagSearch, TagAccount, TagMachine, TagAudit, TagMessage, TagIAM, TagSQL, TagPlatform}
	var declared []string
	for _, tg := range d.Tags {
		declared = append(declared, tg.Name)
	}
	if strings.Join(declared, "|") != strings.Join(groups, "|") {
		t.Errorf("tags %q, want the 10 groups %q", declared, groups)
	}
	isGroup := map[string]bool{}
	for _, g := range groups {
		isGroup[g] = true
	}
	usedTags := map[string]bool{}

	if len(d.Security) != 1 || d.Security[0]["bearerAuth"] == nil {
		t.Errorf("global security %v, want bearerAuth", d.Security)
	}
	if bs := d.Components.SecuritySchemes["bearerAuth"]; bs["type"] != "http" || bs["scheme"] != "bearer" || bs["bearerFormat"] != "JWT" {
		t.Errorf("bearerAuth scheme %v", bs)
	}
	if bs := d.Components.SecuritySchemes["basicAuth"]; bs["type"] != "http" || bs["scheme"] != "basic" {
		t.Errorf("basicAuth scheme %v", bs)
	}

	docs := opDocTable()
	known := pathParamDocs()
	opIDs := map[string]string{}
	for _, r := range s.Routes() {
		op, ok := d.Paths[r.Path][strings.ToLower(r.Method)]
		if !ok {
			t.Errorf("%s %s missing", r.Method, r.Path)
			continue
		}
		where := r.Method + " " + r.Path
		if prev, dup := opIDs[op.OperationID]; dup || op.OperationID == "" {
			t.Errorf("%s: operationId %q not unique (also %s)", where, op.OperationID, prev)
		}
		opIDs[op.OperationID] = where
		if op.OperationID != r.OpID || op.Summary != r.Summary {
			t.Errorf("%s: operationId/summary %q/%q, want %q/%q", where, op.OperationID, op.Summary, r.OpID, r.Summary)
		}
		if len(op.Tags) != 1 || !isGroup[op.Tags[0]] || op.Tags[0] != r.Tag {
			t.Errorf("%s: tags %q, want [%q] from the 10 groups", where, op.Tags, r.Tag)
		} else {
			usedTags[op.Tags[0]] = true
		}
		if _, ok := docs[r.OpID]; !ok {
			t.Errorf("%s: no entry in opDocTable for %s", where, r.OpID)
		}

		var inPath []string
		for _, m := range pathParam.FindAllStringSubmatch(r.Path, -1) {
			inPath = append(inPath, m[1])
			if _, ok := known[m[1]]; !ok {
				t.Errorf("%s: path parameter {%s} has no entry in pathParamDocs", where, m[1])
			}
		}
		var documented []string
		for _, p := range op.Parameters {
			if p.In == "path" {
				documented = append(documented, p.Name)
				if !p.Required {
					t.Errorf("%s: path parameter %s not required", where, p.Name)
				}
			}
		}
		if strings.Join(inPath, ",") != strings.Join(documented, ",") {
			t.Errorf("%s: path parameters %v, want %v", where, documented, inPath)
		}

		if _, ok := op.Responses["200"]; !ok {
			t.Errorf("%s: no 200 response", where)
		}
		_, has501 := op.Responses["501"]
		if r.Handler == nil && !has501 {
			t.Errorf("%s: not implemented, but no 501 documented", where)
		}
		_, has401 := op.Responses["401"]
		_, has403 := op.Responses["403"]
		switch {
		case r.OpID == tokenOpID || r.OpID == introspectOpID || r.OpID == revokeOpID:
			if len(op.Security) != 1 || op.Security[0]["basicAuth"] == nil {
				t.Errorf("%s: security %v, want basicAuth", where, op.Security)
			}
		case r.Access == Public:
			if op.Security == nil || len(op.Security) != 0 {
				t.Errorf("%s: public operation with security %v", where, op.Security)
			}
		default:
			if op.Security != nil {
				t.Errorf("%s: overrides the global bearer requirement: %v", where, op.Security)
			}
			if !has401 {
				t.Errorf("%s: no 401", where)
			}
		}
		// Admin routes share the ROLE_ADMIN 403; the token endpoint has its
		// own OAuth 403 access_denied (tenant mismatch in token exchange,
		// docs/decisions/0005-token-endpoint.md); no other route answers 403.
		roleForbidden := op.Responses["403"]["$ref"] == "#/components/responses/Forbidden"
		switch {
		case r.Access == Admin && !roleForbidden:
			t.Errorf("%s: admin route without the shared Forbidden response", where)
		case r.Access != Admin && roleForbidden:
			t.Errorf("%s: access %d documents the ROLE_ADMIN 403", where, r.Access)
		case r.OpID == tokenOpID:
			c, _ := op.Responses["403"]["content"].(map[string]any)
			if c["application/json"] == nil {
				t.Errorf("%s: 403 access_denied not documented as OAuth JSON: %v", where, op.Responses["403"])
			}
		case r.Access != Admin && has403 && !changeFeedOp(r.OpID):
			// The change feed's routes need ROLE_M2M or ROLE_ADMIN (fast/changes.go) and document their 403.
			t.Errorf("%s: access %d, but a 403 is documented", where, r.Access)
		}
	}
	contractOps := 0
	for id := range opIDs {
		if !isExtension(id) {
			contractOps++
		}
	}
	if contractOps != 87 {
		t.Errorf("%d contract operations, want 87", contractOps)
	}
	for id := range docs {
		found := false
		for _, r := range s.Routes() {
			found = found || r.OpID == id
		}
		if !found {
			t.Errorf("opDocTable has %s, which no route has", id)
		}
	}
	for _, g := range groups {
		if !usedTags[g] {
			t.Errorf("tag group %q has no operation", g)
		}
	}
}

func TestOpenAPIParameterTypes(t *testing.T) {
	t.Parallel()
	d := decodeDoc(t, servedDoc(t, newTestServer(t)))
	uuidParams := map[string]bool{"entityId": true, "transactionId": true, "jobId": true, "messageId": true}
	enums := map[string][]string{
		"format":      {"JSON", "XML"},
		"dataFormat":  {"JSON", "XML"},
		"changeLevel": {"ARRAY_LENGTH", "ARRAY_ELEMENTS", "TYPE", "STRUCTURAL"},
	}
	seenConverters := map[string]bool{}
	for path, item := range d.Paths {
		for method, op := range item {
			for _, p := range op.Parameters {
				where := fmt.Sprintf("%s %s %s %s", method, path, p.In, p.Name)
				if p.Schema == nil {
					t.Errorf("%s: no schema", where)
					continue
				}
				switch {
				case p.In == "path" && p.Name == "modelVersion":
					if p.Schema["type"] != "integer" {
						t.Errorf("%s: type %v, want integer", where, p.Schema["type"])
					}
				case p.In == "path" && uuidParams[p.Name]:
					if p.Schema["type"] != "string" || p.Schema["format"] != "uuid" {
						t.Errorf("%s: schema %v, want string/uuid", where, p.Schema)
					}
				case p.In == "path" && p.Name == "converter":
					for _, v := range p.Schema["enum"].([]any) {
						seenConverters[v.(string)] = true
					}
				case p.In == "path" && enums[p.Name] != nil:
					got, _ := p.Schema["enum"].([]any)
					if len(got) == 0 {
						t.Errorf("%s: no enum", where)
					}
					for _, v := range got {
						if !contains(enums[p.Name], v.(string)) {
							t.Errorf("%s: enum value %v", where, v)
						}
					}
				}
			}
		}
	}
	for _, c := range []string{"SAMPLE_DATA", "SIMPLE_VIEW", "JSON_SCHEMA"} {
		if !seenConverters[c] {
			t.Errorf("converter %s not listed", c)
		}
	}

	get := d.Paths["/entity/{entityName}/{modelVersion}"]["get"]
	for _, name := range []string{"pageSize", "pageNumber", "pointInTime"} {
		if !hasParam(get, "query", name) {
			t.Errorf("getAllEntities lacks query %s", name)
		}
	}
	if !hasParam(d.Paths["/clients"]["post"], "query", "withAdminRole") {
		t.Error("createTechnicalUser lacks withAdminRole")
	}
	if !hasParam(d.Paths["/search/direct/{entityName}/{modelVersion}"]["post"], "query", "limit") {
		t.Error("searchEntities lacks limit")
	}
	one := d.Paths["/entity/{entityId}"]["get"]
	if !hasParam(one, "query", "pointInTime") || !hasParam(one, "query", "transactionId") {
		t.Error("getOneEntity lacks pointInTime/transactionId")
	}

	tok := d.Paths["/oauth/token"]["post"]
	if tok.RequestBody == nil || tok.RequestBody.Content["application/x-www-form-urlencoded"] == nil || !tok.RequestBody.Required {
		t.Errorf("token request body %+v, want required application/x-www-form-urlencoded", tok.RequestBody)
	}
	for _, st := range []string{"200", "400", "401"} {
		c, _ := tok.Responses[st]["content"].(map[string]any)
		if c["application/json"] == nil {
			t.Errorf("token %s response content %v, want application/json", st, c)
		}
	}
}

func hasParam(op oasOperation, in, name string) bool {
	for _, p := range op.Parameters {
		if p.In == in && p.Name == name {
			return true
		}
	}
	return false
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// TestOpenAPIAgreesWithWireContract: the served document gives every
// operation exactly the parameters (place, type, required) and request body
// docs/operations.md lists, in any clone; where the external wire contract
// is present, every parameter and request body it declares is in the list
// with the same place, requirement and path type.
func TestOpenAPIAgreesWithWireContract(t *testing.T) {
	t.Parallel()
	list := requiredOperations(t)
	served, err := OperationsOf(servedDoc(t, newTestServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Operation{}
	for _, o := range list {
		byKey[o.Key()] = o
	}
	for _, o := range served {
		want, ok := byKey[o.Key()]
		if !ok {
			continue // the route-set test reports it
		}
		if !reflect.DeepEqual(o, want) {
			t.Errorf("%s: served %+v\ndocs/operations.md %+v (run make generate)", o.Key(), o, want)
		}
	}

	wc := wireContract(t)
	if wc == nil {
		return
	}
	// Transport headers the server reads itself, not as API parameters.
	transport := map[string]bool{"Authorization": true, "Content-Type": true, "Content-Length": true}
	for p, item := range wc {
		for method, rawOp := range item {
			op, ok := rawOp.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			where := strings.ToUpper(method) + " " + p
			mine, ok := byKey[where]
			if !ok {
				continue // TestOperationsListMatchesWireContract reports it
			}
			params, _ := op["parameters"].([]any)
			common, _ := item["parameters"].([]any)
			for _, rp := range append(common, params...) {
				pm, _ := rp.(map[string]any)
				name, _ := pm["name"].(string)
				in, _ := pm["in"].(string)
				if name == "" || transport[name] {
					continue
				}
				found := false
				for _, q := range mine.Params {
					if q.Name != name || q.In != in {
						continue
					}
					found = true
					req, _ := pm["required"].(bool)
					if req != q.Required && !(name == "audience" && in == "query") {
						t.Errorf("%s: %s %s required=%v, contract says %v", where, in, name, q.Required, req)
					}
					if in == "path" {
						sch, _ := pm["schema"].(map[string]any)
						typ, _ := sch["type"].(string)
						if !strings.HasPrefix(q.Type, typ) {
							t.Errorf("%s: path %s type %v, contract %v", where, name, q.Type, typ)
						}
						if sch["format"] == "uuid" && !strings.HasSuffix(q.Type, "/uuid") {
							t.Errorf("%s: path %s should be format uuid", where, name)
						}
					}
				}
				if !found {
					t.Errorf("%s: %s parameter %q missing", where, in, name)
				}
			}
			if (op["requestBody"] != nil) != mine.Body {
				t.Errorf("%s: request body documented %v, contract %v", where, mine.Body, op["requestBody"] != nil)
			}
		}
	}
}

// regexPathMatching makes libopenapi-validator match request paths by its
// method-aware regex search instead of its radix tree. The wire contract has
// three pairs of templates that differ only in parameter names
// (/entity/{entityId} and /entity/{format}, and two more; see
// TestOpenAPIEquivalentTemplatesSplitByMethod). The radix tree keeps one
// path item per shape, the last one inserted, and then reports the other's
// methods as missing; the regex search prefers the template that has the
// request's method. The paths themselves must stay as the contract has them.
type regexPathMatching struct{}

func (regexPathMatching) Lookup(string) (*v3high.PathItem, string, bool) { return nil, "", false }

// lazySchemaCache is a schema cache filled on first use. NewValidator
// compiles every schema of the document into a non-empty cache it is given
// unless the cache already reports the schema, and a cache of nil compiles
// a schema again on every check; this one reports every schema as present
// (with no entry, which the checks treat as a miss) until armed, so
// construction compiles nothing and each check compiles the schemas it
// meets once. The checks themselves are the library's, unchanged.
type lazySchemaCache struct {
	armed   atomic.Bool
	entries sync.Map // uint64 -> *cache.SchemaCacheEntry
}

func (c *lazySchemaCache) Load(key uint64) (*cache.SchemaCacheEntry, bool) {
	if !c.armed.Load() {
		return nil, true
	}
	v, ok := c.entries.Load(key)
	if !ok {
		return nil, false
	}
	return v.(*cache.SchemaCacheEntry), true
}

func (c *lazySchemaCache) Store(key uint64, e *cache.SchemaCacheEntry) {
	if c.armed.Load() {
		c.entries.Store(key, e)
	}
}

func (c *lazySchemaCache) Range(f func(uint64, *cache.SchemaCacheEntry) bool) {
	c.entries.Range(func(k, v any) bool { return f(k.(uint64), v.(*cache.SchemaCacheEntry)) })
}

// TestOpenAPIEquivalentTemplatesSplitByMethod pins down the templates that
// OpenAPI 3.1 calls identical (same shape, different parameter names): each
// group must come from the wire contract as is, and its methods must not
// overlap, so that the router, and a reader, can tell them apart by method.
func TestOpenAPIEquivalentTemplatesSplitByMethod(t *testing.T) {
	t.Parallel()
	d := decodeDoc(t, servedDoc(t, newTestServer(t)))
	shapes := map[string][]string{}
	for p := range d.Paths {
		shape := pathParam.ReplaceAllString(p, "{}")
		shapes[shape] = append(shapes[shape], p)
	}
	var groups []string
	for shape, ps := range shapes {
		if len(ps) < 2 {
			continue
		}
		sort.Strings(ps)
		groups = append(groups, strings.Join(ps, " "))
		seen := map[string]string{}
		for _, p := range ps {
			for m := range d.Paths[p] {
				if other, dup := seen[m]; dup {
					t.Errorf("%s: %s is on both %s and %s", shape, strings.ToUpper(m), other, p)
				}
				seen[m] = p
			}
		}
	}
	sort.Strings(groups)
	want := []string{
		"/entity/{entityId} /entity/{format}",
		"/entity/{entityName}/{modelVersion} /entity/{format}/{entityId}",
		"/entity/{format}/{entityId}/{transition} /entity/{format}/{entityName}/{modelVersion}",
	}
	if strings.Join(groups, "\n") != strings.Join(want, "\n") {
		t.Errorf("equivalent templates:\n%s\nwant (the wire contract's):\n%s", strings.Join(groups, "\n"), strings.Join(want, "\n"))
	}
}

// TestNotImplementedAnswersMatchDocument validates real 501 answers against
// the document's response schemas.
func TestNotImplementedAnswersMatchDocument(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	doc, err := libopenapi.NewDocument(servedDoc(t, s))
	if err != nil {
		t.Fatal(err)
	}
	// The 501 answers meet a handful of the document's schemas: compile
	// those on first use rather than all of them up front.
	schemas := new(lazySchemaCache)
	v, errs := validator.NewValidator(doc, vconfig.WithPathTree(regexPathMatching{}), vconfig.WithSchemaCache(schemas))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	schemas.armed.Store(true)
	checked := 0
	for _, r := range s.Routes() {
		if r.Handler != nil {
			continue
		}
		uri := "/api" + pathParam.ReplaceAllStringFunc(r.Path, func(m string) string {
			if m == "{modelVersion}" {
				return "1"
			}
			return "0b9e9a4c-7f4e-11ef-8000-000000000001"
		})
		resp := do(s, r.Method, uri)
		req, _ := http.NewRequest(r.Method, "http://svc.test"+uri, nil)
		hr := &http.Response{
			StatusCode: resp.StatusCode(),
			Header:     http.Header{"Content-Type": {string(resp.Header.ContentType())}},
			Body:       io.NopCloser(bytes.NewReader(resp.Body())),
			Request:    req,
		}
		if ok, verrs := v.ValidateHttpResponse(req, hr); !ok {
			for _, e := range verrs {
				t.Errorf("%s %s: %v", r.Method, uri, e)
			}
		}
		checked++
	}
	t.Logf("validated %d 501 answers", checked)
}

// changeFeedOp reports the change feed's operations, which answer 403
// without ROLE_M2M or ROLE_ADMIN.
func changeFeedOp(opID string) bool {
	for _, r := range changeFeedExtRoutes() {
		if r.OpID == opID {
			return true
		}
	}
	return false
}
