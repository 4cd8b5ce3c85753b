package model

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
)

// XMLToJSON converts an XML sample document to the JSON document svc infers
// from (docs/decisions/0010-schema-inference.md):
//   - the root element's name is dropped; its attributes and children become
//     the fields of the top-level object; namespace prefixes are dropped;
//   - attribute values and text-only elements become scalars: a valid JSON
//     number stays a number, text strconv.ParseBool accepts is a boolean,
//     anything else is a string;
//   - repeated sibling elements become an array, in document order;
//   - an element with attributes or children and text keeps the text as
//     `_text`; an empty element is an empty object; a root holding only text
//     becomes {"_value": …};
//   - text is trimmed and separate chunks are joined with one space.
//
// Namespace declarations (xmlns, xmlns:p) are not data and are skipped.
// encoding/xml never fetches external entities or DTDs. maxDepth bounds
// element nesting and maxNodes the elements plus attributes, so a hostile
// body cannot make the tree outgrow its own size many times over.
func XMLToJSON(doc []byte, maxDepth, maxNodes int) ([]byte, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	var (
		stack []*xnode
		root  *xnode
		nodes int
	)
	count := func() error {
		nodes++
		if maxNodes > 0 && nodes > maxNodes {
			return fmt.Errorf("parse XML: more than %d elements and attributes", maxNodes)
		}
		return nil
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if root != nil && len(stack) == 0 {
				return nil, errors.New("parse XML: more than one root element")
			}
			if maxDepth > 0 && len(stack) >= maxDepth {
				return nil, fmt.Errorf("parse XML: elements nested deeper than %d", maxDepth)
			}
			if err := count(); err != nil {
				return nil, err
			}
			n := &xnode{}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
					continue
				}
				if err := count(); err != nil {
					return nil, err
				}
				n.add(a.Name.Local, &xnode{text: []string{a.Value}, leaf: true})
			}
			if len(stack) == 0 {
				root = n
			} else {
				stack[len(stack)-1].add(t.Name.Local, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, errors.New("parse XML: unexpected end element")
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				if len(bytes.TrimSpace(t)) > 0 {
					return nil, errors.New("parse XML: text outside the root element")
				}
				continue
			}
			if s := strings.TrimSpace(string(t)); s != "" {
				top := stack[len(stack)-1]
				top.text = append(top.text, s)
			}
		}
	}
	if len(stack) != 0 {
		return nil, errors.New("parse XML: unexpected end of document")
	}
	if root == nil {
		return nil, errors.New("parse XML: empty document")
	}
	out := make([]byte, 0, len(doc))
	if len(root.kids) == 0 && len(root.text) > 0 {
		out = append(out, `{"_value":`...)
		out = appendScalar(out, strings.Join(root.text, " "))
		return append(out, '}'), nil
	}
	return root.appendJSON(out), nil
}

// xnode is one element (or attribute, when leaf) of the document.
type xnode struct {
	kids []xkid // in document order; grouped by name when written
	text []string
	leaf bool
}

type xkid struct {
	name string
	n    *xnode
}

func (n *xnode) add(name string, c *xnode) { n.kids = append(n.kids, xkid{name, c}) }

type xgroup struct {
	name    string
	members []*xnode
}

// groups returns the children grouped by name, groups in first-seen
// order, members in document order. Linear in the number of children.
func (n *xnode) groups() []xgroup {
	var out []xgroup
	if len(n.kids) <= 8 {
	next:
		for _, k := range n.kids {
			for i := range out {
				if out[i].name == k.name {
					out[i].members = append(out[i].members, k.n)
					continue next
				}
			}
			out = append(out, xgroup{k.name, []*xnode{k.n}})
		}
		return out
	}
	idx := make(map[string]int, len(n.kids))
	for _, k := range n.kids {
		i, ok := idx[k.name]
		if !ok {
			i = len(out)
			idx[k.name] = i
			out = append(out, xgroup{name: k.name})
		}
		out[i].members = append(out[i].members, k.n)
	}
	return out
}

func (n *xnode) appendJSON(b []byte) []byte {
	if n.leaf || (len(n.kids) == 0 && len(n.text) > 0) {
		return appendScalar(b, strings.Join(n.text, " "))
	}
	b = append(b, '{')
	groups := n.groups()
	for i, g := range groups {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, g.name)
		b = append(b, ':')
		if len(g.members) == 1 {
			b = g.members[0].appendJSON(b)
			continue
		}
		b = append(b, '[')
		for j, c := range g.members {
			if j > 0 {
				b = append(b, ',')
			}
			b = c.appendJSON(b)
		}
		b = append(b, ']')
	}
	if len(n.text) > 0 {
		if len(groups) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"_text":`...)
		b = appendScalar(b, strings.Join(n.text, " "))
	}
	return append(b, '}')
}

// appendScalar writes text as a JSON number when it is one, a boolean when
// strconv.ParseBool accepts it, and a string otherwise.
func appendScalar(b []byte, s string) []byte {
	if isJSONNumber(s) {
		return append(b, s...)
	}
	if v, err := strconv.ParseBool(s); err == nil {
		return strconv.AppendBool(b, v)
	}
	return appendString(b, s)
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// isJSONNumber reports whether s is a number by the JSON grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(s)
}
