package entity

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// MergePatch applies an RFC 7386 merge patch to target: members of a patch
// object overwrite, objects merge recursively, null deletes, anything else
// (arrays, scalars, a non-object patch) replaces. Member order of target is
// kept and new members are appended; numbers pass through as their text.
func MergePatch(target, patch []byte) ([]byte, error) {
	patch = bytes.TrimSpace(patch)
	if len(patch) == 0 || patch[0] != '{' {
		return append([]byte(nil), patch...), nil
	}
	pm, err := members(patch)
	if err != nil {
		return nil, err
	}
	var tm []member
	if t := bytes.TrimSpace(target); len(t) > 0 && t[0] == '{' {
		if tm, err = members(t); err != nil {
			return nil, err
		}
	}
	for _, p := range pm {
		i := find(tm, p.key)
		switch {
		case string(p.val) == "null":
			if i >= 0 {
				tm = append(tm[:i], tm[i+1:]...)
			}
		case i >= 0:
			v, err := MergePatch(tm[i].val, p.val)
			if err != nil {
				return nil, err
			}
			tm[i].val = v
		default:
			v, err := MergePatch(nil, p.val)
			if err != nil {
				return nil, err
			}
			tm = append(tm, member{p.key, p.raw, v})
		}
	}
	out := []byte{'{'}
	for i, m := range tm {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m.raw...)
		out = append(out, ':')
		out = append(out, m.val...)
	}
	return append(out, '}'), nil
}

type member struct {
	key string
	raw []byte // the key as written, quoted
	val []byte
}

func find(ms []member, k string) int {
	for i := range ms {
		if ms[i].key == k {
			return i
		}
	}
	return -1
}

// members lists an object's members in order with their raw values.
func members(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		kr, _ := json.Marshal(k)
		if i := find(out, k); i >= 0 { // a repeated key: the last one wins
			out = append(out[:i], out[i+1:]...)
		}
		out = append(out, member{k, kr, bytes.TrimSpace(v)})
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, err
	}
	return out, nil
}
