package help

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// errorCode is the shape of a catalogue code.
var errorCode = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

// moduleRoot is the directory holding go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

type goFile struct {
	path string
	pkg  string // directory, which identifies the package
	f    *ast.File
}

// scanErrorCodes finds the error codes svc's non-test Go source can emit,
// with where each is written. A code counts when a string constant matching
// the catalogue shape sits where a code goes:
//   - a constant of package apierr (the shared catalogue);
//   - a `Code:` field of a composite literal (Problem, apierr.Error,
//     iam.Error, ...);
//   - the argument bound to a parameter named `code` (apierr.New/Newf,
//     NewProblem, helpers such as notFound(code, msg));
//   - a comparison with, or a switch case on, a `.Code` field;
//   - a key of a map literal assigned to a variable whose name mentions
//     code (the status and retryable tables of fast/errors.go).
//
// Identifiers and pkg.Name selectors are resolved through string constants.
func scanErrorCodes(fsys fs.FS) (map[string][]string, error) {
	fset := token.NewFileSet()
	var files []goFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", p, err)
		}
		files = append(files, goFile{p, path.Dir(p), f})
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Pass 1: string constants (by package directory and by package name
	// for selectors) and the positions of parameters named code.
	consts := map[string]string{} // "dir\x00Name" and "pkgname.Name"
	codeParams := map[string][]int{}
	for _, gf := range files {
		for _, decl := range gf.f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i >= len(vs.Values) {
							continue
						}
						if s, ok := stringLit(vs.Values[i]); ok {
							consts[gf.pkg+"\x00"+n.Name] = s
							consts[gf.f.Name.Name+"."+n.Name] = s
						}
					}
				}
			case *ast.FuncDecl:
				i := 0
				for _, field := range d.Type.Params.List {
					if len(field.Names) == 0 {
						i++
						continue
					}
					for _, n := range field.Names {
						if n.Name == "code" {
							codeParams[d.Name.Name] = append(codeParams[d.Name.Name], i)
						}
						i++
					}
				}
			}
		}
	}

	codes := map[string][]string{}
	for _, gf := range files {
		resolve := func(e ast.Expr) (string, bool) {
			switch x := e.(type) {
			case *ast.BasicLit:
				return stringLit(x)
			case *ast.Ident:
				s, ok := consts[gf.pkg+"\x00"+x.Name]
				return s, ok
			case *ast.SelectorExpr:
				if pkg, ok := x.X.(*ast.Ident); ok {
					s, ok := consts[pkg.Name+"."+x.Sel.Name]
					return s, ok
				}
			}
			return "", false
		}
		add := func(e ast.Expr) {
			if s, ok := resolve(e); ok && errorCode.MatchString(s) {
				pos := fset.Position(e.Pos())
				codes[s] = append(codes[s], fmt.Sprintf("%s:%d", pos.Filename, pos.Line))
			}
		}
		if gf.f.Name.Name == "apierr" {
			for _, decl := range gf.f.Decls {
				if d, ok := decl.(*ast.GenDecl); ok && d.Tok == token.CONST {
					for _, spec := range d.Specs {
						for _, v := range spec.(*ast.ValueSpec).Values {
							add(v)
						}
					}
				}
			}
		}
		ast.Inspect(gf.f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Code" {
					add(x.Value)
				}
			case *ast.CallExpr:
				name := ""
				switch fn := x.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				}
				for _, i := range codeParams[name] {
					if i < len(x.Args) {
						add(x.Args[i])
					}
				}
			case *ast.BinaryExpr:
				if x.Op == token.EQL || x.Op == token.NEQ {
					if isCodeField(x.X) {
						add(x.Y)
					}
					if isCodeField(x.Y) {
						add(x.X)
					}
				}
			case *ast.SwitchStmt:
				if x.Tag != nil && isCodeField(x.Tag) {
					for _, st := range x.Body.List {
						for _, e := range st.(*ast.CaseClause).List {
							add(e)
						}
					}
				}
			case *ast.ValueSpec:
				for i, n := range x.Names {
					if i < len(x.Values) && strings.Contains(strings.ToLower(n.Name), "code") {
						if cl, ok := x.Values[i].(*ast.CompositeLit); ok {
							if _, isMap := cl.Type.(*ast.MapType); isMap {
								for _, el := range cl.Elts {
									if kv, ok := el.(*ast.KeyValueExpr); ok {
										add(kv.Key)
									}
								}
							}
						}
					}
				}
			}
			return true
		})
	}
	return codes, nil
}

func isCodeField(e ast.Expr) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && s.Sel.Name == "Code"
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
