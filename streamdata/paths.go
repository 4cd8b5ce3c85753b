package streamdata

import (
	"regexp"
	"strconv"
	"strings"

	"svc/platform/apierr"
)

// ref is a resolved column path: a lifecycle field or a data path.
type ref struct {
	// meta is the entity-level field name, or "".
	meta string
	// path is the data path in the search language ($.a.b, $.a[*].b).
	path string
	segs []seg
}

// seg is one hop of a data path: a member name, or every element.
type seg struct {
	name string
	all  bool
}

func (r ref) many() bool {
	for _, s := range r.segs {
		if s.all {
			return true
		}
	}
	return false
}

// metaNames are the entity-level fields a column may name, mapped to the
// predicate's lifecycle names ("" where no condition can use them).
var metaNames = map[string]string{
	"id": "id", "state": "state", "creationDate": "creationDate", "lastUpdateTime": "lastUpdateTime",
	"previousTransition": "transitionForLatestSave", "transitionForLatestSave": "transitionForLatestSave",
	"transactionId": "transactionId", "entityModelName": "", "entityModelVersion": "",
}

var (
	// valueMap matches Cloud's type-segregated value maps, whose key is
	// the JSON path of the leaf: ….strings.[$.a.b].
	valueMap = regexp.MustCompile(`\.\[(\$[^\]]*(?:\[\*\][^\]]*)*)\]$`)
	// hint matches a class hint of a segment: name@com#x#Y.
	hint = regexp.MustCompile(`@[A-Za-z0-9_#$]+`)
	// quoted matches a map-key segment .['key'] or ['key'].
	quoted = regexp.MustCompile(`\.?\['([^']*)'\]`)
)

func badPath(p, why string) error {
	return apierr.New(apierr.InvalidFieldPath, "stream definition: column path "+strconv.Quote(p)+" cannot be served: "+why,
		apierr.P("path", p))
}

// resolvePath reads a column path in any of the accepted forms (docs/decisions/0025-stream-data.md):
// lifecycle names, JSONPath-like data paths and Cloud's long forms with
// class hints and value maps. Paths over several entity classes (hops > 1)
// are refused: JSON models have no typed references.
func resolvePath(p string, hops int) (ref, error) {
	if hops > 1 {
		return ref{}, badPath(p, "it follows "+strconv.Itoa(hops)+" references between entities; only paths within the model are supported")
	}
	if p == "" {
		return ref{}, badPath(p, "it is empty")
	}
	if len(p) > 1024 {
		return ref{}, badPath(p[:64]+"…", "it is longer than 1024 characters")
	}
	s := p
	if m := valueMap.FindStringSubmatch(s); m != nil && strings.Contains(s[:len(s)-len(m[0])], "@") {
		s = m[1]
	} else if m != nil && strings.Count(s, ".[") == 1 && strings.HasPrefix(m[1], "$") {
		s = m[1]
	}
	s = hint.ReplaceAllString(s, "")
	if f, ok := metaNames[s]; ok {
		return ref{meta: s, path: f}, nil
	}
	s = quoted.ReplaceAllString(s, ".$1")
	s = strings.TrimPrefix(s, "$")
	s = strings.TrimPrefix(s, ".")
	if s == "" {
		return ref{}, badPath(p, "it names the whole document")
	}
	r := ref{}
	var b strings.Builder
	b.WriteString("$")
	for _, part := range strings.Split(s, ".") {
		name := part
		all := false
		if strings.HasSuffix(name, "[*]") {
			name, all = strings.TrimSuffix(name, "[*]"), true
		}
		if name == "" && all && len(r.segs) > 0 {
			// a.[*] is the elements of a
			r.segs = append(r.segs, seg{all: true})
			b.WriteString("[*]")
			continue
		}
		if name == "" || strings.ContainsAny(name, "[]'\"") {
			return ref{}, badPath(p, "segment "+strconv.Quote(part)+" is not a member name or [*]")
		}
		r.segs = append(r.segs, seg{name: name})
		b.WriteString(".")
		b.WriteString(name)
		if all {
			r.segs = append(r.segs, seg{all: true})
			b.WriteString("[*]")
		}
	}
	r.path = b.String()
	return r, nil
}

// value extracts the value at r from a decoded document: a scalar, or an
// array of the values found when the path crosses [*]. nil when absent.
func (r ref) value(doc any) any {
	if !r.many() {
		cur := doc
		for _, s := range r.segs {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			if cur, ok = m[s.name]; !ok {
				return nil
			}
		}
		return cur
	}
	var out []any
	var walk func(cur any, i int)
	walk = func(cur any, i int) {
		if i == len(r.segs) {
			if cur != nil {
				out = append(out, cur)
			}
			return
		}
		s := r.segs[i]
		if s.all {
			arr, ok := cur.([]any)
			if !ok {
				return
			}
			for _, x := range arr {
				walk(x, i+1)
			}
			return
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return
		}
		if v, ok := m[s.name]; ok {
			walk(v, i+1)
		}
	}
	walk(doc, 0)
	if out == nil {
		return nil
	}
	return out
}
