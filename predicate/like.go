package predicate

import (
	"strings"
	"unicode/utf8"
)

type likeKind uint8

const (
	likeLit likeKind = iota
	likeOne          // _
	likeAny          // %
)

type likeTok struct {
	kind likeKind
	r    rune
}

// compileLike reads a LIKE pattern: % is any run, _ one character, and a
// backslash makes the next character literal (a trailing lone backslash is
// itself literal). Everything else, regex metacharacters included, is
// literal.
func compileLike(p string) []likeTok {
	toks := make([]likeTok, 0, len(p))
	for i := 0; i < len(p); {
		r, w := utf8.DecodeRuneInString(p[i:])
		i += w
		switch r {
		case '\\':
			if i < len(p) {
				r, w = utf8.DecodeRuneInString(p[i:])
				i += w
			}
			toks = append(toks, likeTok{kind: likeLit, r: r})
		case '%':
			if n := len(toks); n > 0 && toks[n-1].kind == likeAny {
				continue
			}
			toks = append(toks, likeTok{kind: likeAny})
		case '_':
			toks = append(toks, likeTok{kind: likeOne})
		default:
			toks = append(toks, likeTok{kind: likeLit, r: r})
		}
	}
	return toks
}

// likeMatch is the anchored glob match with one backtrack point, linear in
// practice and at worst len(s)·len(toks).
func likeMatch(toks []likeTok, s []byte) bool {
	p, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		r, w := utf8.DecodeRune(s[si:])
		if p < len(toks) {
			t := toks[p]
			if t.kind == likeOne || (t.kind == likeLit && t.r == r) {
				p++
				si += w
				continue
			}
			if t.kind == likeAny {
				star, mark = p, si
				p++
				continue
			}
		}
		if star >= 0 {
			_, w2 := utf8.DecodeRune(s[mark:])
			mark += w2
			p, si = star+1, mark
			continue
		}
		return false
	}
	for p < len(toks) && toks[p].kind == likeAny {
		p++
	}
	return p == len(toks)
}

// likeSQL renders the pattern for PostgreSQL's LIKE (default escape \).
func likeSQL(toks []likeTok) string {
	var b strings.Builder
	for _, t := range toks {
		switch t.kind {
		case likeAny:
			b.WriteByte('%')
		case likeOne:
			b.WriteByte('_')
		default:
			if t.r == '%' || t.r == '_' || t.r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(t.r)
		}
	}
	return b.String()
}
