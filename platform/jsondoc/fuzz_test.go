package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheck compares Check with encoding/json and an independent oracle:
// a document Check accepts is JSON, UTF-8, free of NUL and of replaced
// (lone-surrogate) characters, with no member named twice in an object;
// a document encoding/json accepts is never refused as a syntax error.
// Seeds (testdata/fuzz/FuzzCheck) hold each refused input class.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":"\u0000"}`, `{"a":"\ud800"}`,
		`{"a":"\udc00x"}`, "{\"a\":\"\xff\"}", "{\"\xed\xa0\x80\":1}", `[{"k":{"x":1,"y":2,"x":3}}]`, `{"e":"\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		err := Check(doc)
		valid := json.Valid(doc)
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("error of type %T", err)
		}
		if valid && e != nil && e.Kind == Syntax {
			t.Fatalf("encoding/json accepts %q; Check: %v", doc, err)
		}
		if err != nil {
			return
		}
		if !valid {
			t.Fatalf("Check accepts %q, encoding/json does not", doc)
		}
		if !utf8.Valid(doc) {
			t.Fatalf("Check accepts non-UTF-8 %q", doc)
		}
		replaced := bytes.Contains(doc, []byte("\xef\xbf\xbd")) || strings.Contains(strings.ToLower(string(doc)), `\ufffd`)
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		type obj struct {
			names map[string]bool
			key   bool // the next string token is a member name
		}
		var stack []*obj
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("decoding %q: %v", doc, err)
			}
			var top *obj
			if len(stack) > 0 {
				top = stack[len(stack)-1]
			}
			isName := top != nil && top.key
			if top != nil {
				top.key = !top.key
			}
			switch v := tok.(type) {
			case json.Delim:
				switch v {
				case '{':
					stack = append(stack, &obj{names: map[string]bool{}, key: true})
				case '[':
					stack = append(stack, nil)
				case '}', ']':
					stack = stack[:len(stack)-1]
					if len(stack) > 0 && stack[len(stack)-1] != nil {
						stack[len(stack)-1].key = true
					}
				}
			case string:
				if strings.IndexByte(v, 0) >= 0 {
					t.Fatalf("Check accepts a NUL in %q", doc)
				}
				if !replaced && strings.ContainsRune(v, utf8.RuneError) {
					t.Fatalf("Check accepts a lone surrogate in %q", doc)
				}
				if isName {
					if top.names[v] {
						t.Fatalf("Check accepts duplicate %q in %q", v, doc)
					}
					top.names[v] = true
				}
			}
		}
	})
}
