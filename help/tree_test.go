package help

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	json "github.com/goccy/go-json"

	"svc/platform/config"
)

// requiredTopics are the topics issue 2 asks for, besides one errors.<CODE>
// per emitted code (TestEveryEmittedErrorCodeHasTopic).
var requiredTopics = []string{
	"quickstart", "cli", "openapi",
	"config", "config.http", "config.auth", "config.database", "config.search", "config.scheduler",
	"config.cluster", "config.grpc", "config.cors", "config.admin",
	"auth", "auth.tokens", "auth.clients", "auth.keys", "auth.trusted-keys", "auth.oidc",
	"models", "entities", "workflows", "search", "audit", "messages", "errors",
}

func TestRequiredTopicsExist(t *testing.T) {
	tree := Default()
	for _, name := range requiredTopics {
		tp, ok := tree.Get(name)
		if !ok {
			t.Errorf("topic %s is missing", name)
			continue
		}
		if tp.Tagline == "" || tp.Body == "" {
			t.Errorf("topic %s: empty tagline or body", name)
		}
	}
}

func TestSeeAlsoResolves(t *testing.T) {
	tree := Default()
	for _, tp := range tree.Topics {
		seen := map[string]bool{}
		for _, ref := range tp.SeeAlso {
			if _, ok := tree.Get(ref); !ok {
				t.Errorf("%s: see_also %q is not a topic", tp.Topic, ref)
			}
			if ref == tp.Topic {
				t.Errorf("%s: see_also names itself", tp.Topic)
			}
			if seen[ref] {
				t.Errorf("%s: see_also lists %q twice", tp.Topic, ref)
			}
			seen[ref] = true
		}
	}
}

// helpRef finds `svc help a b` / `svc help a.b` in bodies: commands people
// will copy, so they must work.
var helpRef = regexp.MustCompile("svc help ([A-Za-z0-9_.-]+(?: [A-Za-z0-9_-]+)*)")

func TestHelpCommandsInBodiesResolve(t *testing.T) {
	tree := Default()
	n := 0
	for _, tp := range tree.Topics {
		for _, m := range helpRef.FindAllStringSubmatch(tp.Body, -1) {
			words := strings.Fields(m[1])
			// Placeholders such as `svc help <topic>` are not references.
			if strings.ContainsAny(m[1], "<>") || words[0] == "topic" {
				continue
			}
			n++
			if _, ok := tree.Find(words...); !ok {
				t.Errorf("%s: body refers to `svc help %s`, which is not a topic", tp.Topic, m[1])
			}
		}
	}
	if n == 0 {
		t.Error("no `svc help ...` reference found in any body; the pattern is wrong")
	}
}

// TestEveryConfigVariableDocumented checks each SVC_* variable appears, in
// code form, in the config topic of its own group, with its _FILE
// companion where it has one.
func TestEveryConfigVariableDocumented(t *testing.T) {
	tree := Default()
	vars := config.Vars(&config.Config{})
	if len(vars) < 50 {
		t.Fatalf("only %d variables in config.Vars", len(vars))
	}
	for _, v := range vars {
		tp, ok := tree.Get("config." + v.Group)
		if !ok {
			t.Errorf("%s: group %q has no topic config.%s", v.Name, v.Group, v.Group)
			continue
		}
		if !strings.Contains(tp.Body, "`"+v.Name+"`") {
			where := ""
			for _, other := range tree.Topics {
				if strings.HasPrefix(other.Topic, "config.") && strings.Contains(other.Body, "`"+v.Name+"`") {
					where = " (it is in " + other.Topic + ")"
				}
			}
			t.Errorf("%s is not documented in config.%s%s", v.Name, v.Group, where)
		}
		if v.File && !strings.Contains(tp.Body, v.Name+"_FILE") {
			t.Errorf("%s accepts %s_FILE, which config.%s does not mention", v.Name, v.Name, v.Group)
		}
	}
}

// TestEveryEmittedErrorCodeHasTopic scans svc's non-test Go source for the
// error codes it can emit and wants errors.<CODE> for each.
func TestEveryEmittedErrorCodeHasTopic(t *testing.T) {
	codes, err := scanErrorCodes(os.DirFS(moduleRoot(t)))
	if err != nil {
		t.Fatal(err)
	}
	// API codes are entries of the closed catalogue (platform/apierr), whose
	// topics fast's TestCatalogueCodesHaveTopics checks; what is left for
	// the scanner are codes written as strings on other wires: the compute
	// protocol's error classes.
	for _, c := range []string{"CLIENT_ERROR", "MEMBER_ERROR", "SERVER_ERROR"} {
		if len(codes[c]) == 0 {
			t.Errorf("scanner missed %s", c)
		}
	}
	tree := Default()
	for code, where := range codes {
		if _, ok := tree.Get("errors." + code); !ok {
			t.Errorf("error code %s (%s) has no topic errors.%s", code, strings.Join(where, ", "), code)
		}
	}
	t.Logf("%d error codes in the source, all with topics", len(codes))
}

// TestErrorScannerFindsEveryForm feeds the scanner each way a code is
// written in svc, so that a missed form cannot hide a missing topic.
func TestErrorScannerFindsEveryForm(t *testing.T) {
	src := `package x

import "svc/platform/apierr"

const (
	ConstCode = "C_CONST"
	notACode  = "NOT_A_CODE"
)

var codeStatus = map[string]int{"C_MAP_KEY": 404}

func notFound(code, msg string) error { return nil }

type Problem struct {
	Status  int
	Code    string
	Message string
}

func NewProblem(status int, code, msg string) *Problem { return nil }

func f(p *Problem) {
	_ = apierr.New("C_APIERR_NEW", "m")
	_ = apierr.Newf("C_APIERR_NEWF", "m %d", 1)
	_ = NewProblem(400, "C_NEW_PROBLEM", "m")
	_ = &Problem{Status: 409, Code: "C_FIELD", Message: "m"}
	_ = notFound("C_HELPER_PARAM", "m")
	_ = apierr.New(ConstCode, "m")
	if p.Code == "C_COMPARE" {
	}
	_ = []string{"ROLE_ADMIN", "SVC_HTTP_PORT"}
	_ = notACode
}
`
	fsys := fstest.MapFS{
		"go.mod":          {Data: []byte("module svc\n")},
		"x/x.go":          {Data: []byte(src)},
		"x/x_test.go":     {Data: []byte(`package x; var _ = NewProblem(1, "C_IN_TEST", "")`)},
		"x/testdata/a.go": {Data: []byte(`package a; var _ = NewProblem(1, "C_IN_TESTDATA", "")`)},
		"apierr/apierr.go": {Data: []byte("package apierr\n\nconst Catalogued = \"C_APIERR_CONST\"\n\n" +
			"func New(code, msg string) error { return nil }\n\nfunc Newf(code, format string, a ...any) error { return nil }\n")},
	}
	codes, err := scanErrorCodes(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"C_APIERR_CONST", "C_APIERR_NEW", "C_APIERR_NEWF", "C_COMPARE", "C_CONST", "C_FIELD", "C_HELPER_PARAM", "C_MAP_KEY", "C_NEW_PROBLEM"}
	if strings.Join(sortedKeys(codes), " ") != strings.Join(want, " ") {
		t.Errorf("scanned %v, want %v", sortedKeys(codes), want)
	}
}

func TestErrorTopicsAreWellFormed(t *testing.T) {
	tree := Default()
	kids := tree.Children("errors")
	if len(kids) < 20 {
		t.Fatalf("only %d error topics", len(kids))
	}
	for _, tp := range kids {
		code := strings.TrimPrefix(tp.Topic, "errors.")
		if !errorCode.MatchString(code) {
			t.Errorf("%s: %q is not an error code", tp.Topic, code)
		}
		if !strings.HasPrefix(tp.Title, code+" ") {
			t.Errorf("%s: title %q does not start with the code", tp.Topic, tp.Title)
		}
		if !strings.Contains(tp.Body, "## STATUS") || !strings.Contains(tp.Body, "## WHAT TO DO") {
			t.Errorf("%s: body lacks a STATUS or WHAT TO DO section", tp.Topic)
		}
	}
}

func TestIndexAndTopicJSON(t *testing.T) {
	tree := Default().WithVersion("1.2.3")
	var idx struct {
		Schema  int              `json:"schema"`
		Version string           `json:"version"`
		Topics  []map[string]any `json:"topics"`
	}
	if err := json.Unmarshal(tree.IndexJSON(), &idx); err != nil {
		t.Fatal(err)
	}
	if idx.Schema != 1 || idx.Version != "1.2.3" || len(idx.Topics) != len(tree.Topics) {
		t.Fatalf("index schema %d version %q, %d topics of %d", idx.Schema, idx.Version, len(idx.Topics), len(tree.Topics))
	}
	for i, tp := range idx.Topics {
		if _, has := tp["body"]; has {
			t.Errorf("index topic %v carries a body", tp["topic"])
		}
		for _, k := range []string{"topic", "title", "stability", "tagline", "see_also"} {
			if _, ok := tp[k]; !ok {
				t.Errorf("index topic %v lacks %s", tp["topic"], k)
			}
		}
		if tp["topic"] != tree.Topics[i].Topic {
			t.Errorf("index order: %v at %d, want %s", tp["topic"], i, tree.Topics[i].Topic)
		}
	}
	one, _ := tree.Get("config.http")
	var m map[string]any
	if err := json.Unmarshal(one.JSON, &m); err != nil {
		t.Fatal(err)
	}
	if m["topic"] != "config.http" || m["body"] != one.Body || m["see_also"] == nil {
		t.Errorf("config.http JSON %v", m)
	}
}

func TestLoadRejectsBadTopics(t *testing.T) {
	ok := "---\ntopic: a\ntitle: A\nstability: stable\n---\n## NAME\n\na — x\n"
	for name, fsys := range map[string]fstest.MapFS{
		"no front matter": {"t/a.md": {Data: []byte("## NAME\n")}},
		"unterminated":    {"t/a.md": {Data: []byte("---\ntopic: a\n")}},
		"name disagrees":  {"t/b.md": {Data: []byte(ok)}},
		"unknown field":   {"t/a.md": {Data: []byte("---\ntopic: a\ntitle: A\nstability: stable\nfoo: 1\n---\nx\n")}},
		"bad stability":   {"t/a.md": {Data: []byte("---\ntopic: a\ntitle: A\nstability: beta\n---\nx\n")}},
		"no title":        {"t/a.md": {Data: []byte("---\ntopic: a\nstability: stable\n---\nx\n")}},
		"orphan child":    {"t/a/b.md": {Data: []byte("---\ntopic: a.b\ntitle: B\nstability: stable\n---\nx\n")}},
	} {
		if _, err := Load(fsys, "t", "v"); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	tree, err := Load(fstest.MapFS{"t/a.md": {Data: []byte(ok)}}, "t", "v")
	if err != nil {
		t.Fatal(err)
	}
	if tp, _ := tree.Get("a"); tp.Tagline != "x" {
		t.Errorf("derived tagline %q, want x", tp.Tagline)
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"cli": true, "config.http": true, "errors.MODEL_NOT_FOUND": true, "auth.trusted-keys": true,
		"": false, ".cli": false, "cli.": false, "-cli": false, "cli-": false, "a b": false, "a/b": false, "ü": false,
	} {
		if got := ValidName([]byte(name)); got != want {
			t.Errorf("ValidName(%q) = %v", name, got)
		}
	}
}

func TestFindJoinsWords(t *testing.T) {
	tree := Default()
	for _, words := range [][]string{{"config", "http"}, {"config.http"}, {"config/http"}, {"CONFIG", "HTTP"}} {
		tp, ok := tree.Find(words...)
		if !ok || tp.Topic != "config.http" {
			t.Errorf("Find(%q) = %v, %v", words, tp, ok)
		}
	}
	for _, words := range [][]string{{}, {""}, {"no", "such"}, {"."}} {
		if tp, ok := tree.Find(words...); ok {
			t.Errorf("Find(%q) found %s", words, tp.Topic)
		}
	}
}
