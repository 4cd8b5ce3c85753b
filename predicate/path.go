package predicate

import (
	"strconv"
	"strings"

	"svc/platform/apierr"
)

type segKind uint8

const (
	segKey   segKind = iota // .name
	segIndex                // [n]
	segAll                  // [*]
)

type segment struct {
	kind  segKind
	key   string // segKey: the member name; segIndex: "[n]" (jsonparser's index form)
	index int
}

// path is a data path compiled once: its segments, the form the schema is
// asked about, and the key lists for the raw-bytes lookup split at every
// [*] hop.
type path struct {
	raw    string
	schema string
	segs   []segment
	chunks [][]string // keys between wildcards; len(chunks) = wildcards+1
}

// maxPathIndex bounds [n] so that an index is never a huge allocation or an
// overflow anywhere downstream.
const maxPathIndex = 1 << 20

// parsePath accepts "$" followed by ".name", "[*]" and "[n]" hops. Names may
// hold any character except '.', '[' and ']' (they are the syntax); there is
// no recursive descent, filter or quoted-bracket form.
func parsePath(s string) (*path, error) {
	raw := strings.TrimSpace(s)
	bad := func(why string) error {
		return apierr.New(apierr.InvalidFieldPath, "invalid field path "+strconv.Quote(raw)+": "+why,
			apierr.P("path", raw))
	}
	if raw == "" {
		return nil, bad("empty path")
	}
	if raw[0] != '$' {
		return nil, bad("a path must start with $ (e.g. $.price)")
	}
	if len(raw) == 1 {
		return nil, bad("the path names no field")
	}
	p := &path{raw: raw}
	var sb strings.Builder
	sb.WriteByte('$')
	cur := []string{}
	i := 1
	for i < len(raw) {
		switch raw[i] {
		case '.':
			j := i + 1
			for j < len(raw) && raw[j] != '.' && raw[j] != '[' && raw[j] != ']' {
				j++
			}
			if j == i+1 {
				return nil, bad("empty field name")
			}
			name := raw[i+1 : j]
			p.segs = append(p.segs, segment{kind: segKey, key: name})
			cur = append(cur, name)
			sb.WriteByte('.')
			sb.WriteString(name)
			i = j
		case '[':
			end := strings.IndexByte(raw[i:], ']')
			if end < 0 {
				return nil, bad("unclosed [")
			}
			inner := raw[i+1 : i+end]
			if inner == "*" {
				p.segs = append(p.segs, segment{kind: segAll})
				p.chunks = append(p.chunks, cur)
				cur = []string{}
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 || n > maxPathIndex || inner[0] == '+' || (len(inner) > 1 && inner[0] == '0') {
					return nil, bad("a subscript must be [*] or a non-negative index")
				}
				k := "[" + inner + "]"
				p.segs = append(p.segs, segment{kind: segIndex, key: k, index: n})
				cur = append(cur, k)
			}
			sb.WriteString("[*]")
			i += end + 1
		default:
			return nil, bad("expected . or [ at offset " + strconv.Itoa(i))
		}
	}
	p.chunks = append(p.chunks, cur)
	p.schema = sb.String()
	return p, nil
}

func (p *path) wildcard() bool { return len(p.chunks) > 1 }
