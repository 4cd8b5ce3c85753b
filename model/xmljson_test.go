package model

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestXMLToJSON(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"reference sample",
			`<root a="1"><name>Alice</name><age>30</age><tag>x</tag><tag>y</tag><flag>true</flag><p><q>1.5</q></p><t k="v">text</t></root>`,
			`{"a":1,"name":"Alice","age":30,"tag":["x","y"],"flag":true,"p":{"q":1.5},"t":{"k":"v","_text":"text"}}`},
		{"namespace prefixes dropped, declarations skipped",
			`<x:root xmlns:x="urn:a" xmlns="urn:b"><x:id>7</x:id><y:v xmlns:y="urn:c" y:k="z"/></x:root>`,
			`{"id":7,"v":{"k":"z"}}`},
		{"empty element is an empty object", `<r><e/><f></f></r>`, `{"e":{},"f":{}}`},
		{"empty root", `<r/>`, `{}`},
		{"scalar root", `<r> 42 </r>`, `{"_value":42}`},
		{"text root string", `<r>hello</r>`, `{"_value":"hello"}`},
		{"chunks joined, trimmed", `<r><m> a <!-- c --> b </m></r>`, `{"m":"a b"}`},
		{"mixed text goes to _text", `<r>hi<b>x</b>there</r>`, `{"b":"x","_text":"hi there"}`},
		{"non-adjacent repeats collect in order", `<r><a>1</a><b>2</b><a>3</a></r>`, `{"a":[1,3],"b":2}`},
		{"ParseBool forms and non-JSON numbers", `<r><a>T</a><b>FALSE</b><c>01</c><d>1.</d><e>-0.5e3</e><f>0</f></r>`,
			`{"a":true,"b":false,"c":"01","d":"1.","e":-0.5e3,"f":0}`},
		{"escaping", `<r><s>&lt;"q"&amp;</s><u>ünï</u></r>`, `{"s":"\u003c\"q\"\u0026","u":"ünï"}`},
		{"cdata", `<r><s><![CDATA[a<b]]></s></r>`, `{"s":"a\u003cb"}`},
		{"many distinct children", `<r>` + strings.Repeat(`<a>1</a><b>x</b><c/><d/><e/><f/><g/><h/><i/>`, 2) + `</r>`,
			`{"a":[1,1],"b":["x","x"],"c":[{},{}],"d":[{},{}],"e":[{},{}],"f":[{},{}],"g":[{},{}],"h":[{},{}],"i":[{},{}]}`},
		{"attribute empty value", `<r a=""/>`, `{"a":""}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := XMLToJSON([]byte(c.in), 64, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON %s", got)
			}
			if string(got) != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestXMLToJSONRejects(t *testing.T) {
	deep := strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100)
	cases := map[string]struct {
		in   string
		want string
	}{
		"empty":            {"", "empty document"},
		"whitespace":       {"  \n", "empty document"},
		"two roots":        {"<a/><b/>", "more than one root"},
		"unclosed":         {"<a><b></b>", "unexpected"},
		"mismatched":       {"<a></b>", "parse XML"},
		"text outside":     {"hello", "text outside"},
		"too deep":         {deep, "nested deeper than 64"},
		"too many nodes":   {"<r>" + strings.Repeat("<a/>", 2000) + "</r>", "more than 1000"},
		"too many attrs":   {`<r ` + strings.Repeat(`a="1" `, 1) + `>` + strings.Repeat(`<x b="1" c="2"/>`, 400) + `</r>`, "more than 1000"},
		"undefined entity": {"<r>&foo;</r>", "parse XML"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := XMLToJSON([]byte(c.in), 64, 1000)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %s, %v; want error containing %q", out, err, c.want)
			}
		})
	}
}

// FuzzXMLToJSON: any input either fails cleanly or yields valid JSON
// holding an object.
func FuzzXMLToJSON(f *testing.F) {
	for _, s := range []string{`<r a="1"><b>x</b><b>2</b></r>`, `<r>1</r>`, `<a:r xmlns:a="u"><a:x/></a:r>`, `<r><![CDATA[x]]>t<c/></r>`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := XMLToJSON(in, 32, 4096)
		if err != nil {
			return
		}
		if !json.Valid(out) || len(out) == 0 || out[0] != '{' {
			t.Fatalf("XMLToJSON(%q) = %q: not a JSON object", in, out)
		}
	})
}
