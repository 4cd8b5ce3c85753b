package fast

import (
	"bytes"
	"strconv"
)

// helpFormat is the representation of a help topic a client asked for.
type helpFormat uint8

const (
	helpJSON helpFormat = iota
	helpMarkdown
	helpText
)

// negotiateHelp picks the help topic representation from an Accept header:
// the supported media range with the highest q wins, ties go to the one
// listed first, and JSON (the contract's representation) is the answer
// for an empty header, */* or nothing supported. text/* selects Markdown.
func negotiateHelp(accept []byte) helpFormat {
	best, bestQ := helpJSON, -1.0
	for len(accept) > 0 {
		var part []byte
		if i := bytes.IndexByte(accept, ','); i >= 0 {
			part, accept = accept[:i], accept[i+1:]
		} else {
			part, accept = accept, nil
		}
		mt, params, _ := bytes.Cut(part, []byte{';'})
		mt = bytes.ToLower(bytes.TrimSpace(mt))
		var f helpFormat
		switch string(mt) {
		case "application/json", "application/*", "*/*":
			f = helpJSON
		case "text/markdown", "text/x-markdown", "text/*":
			f = helpMarkdown
		case "text/plain":
			f = helpText
		default:
			continue
		}
		q := acceptQ(params)
		if q > bestQ {
			best, bestQ = f, q
		}
	}
	if bestQ <= 0 {
		return helpJSON
	}
	return best
}

// acceptQ reads the q parameter of one media range (1 when absent or
// malformed, as most servers treat it).
func acceptQ(params []byte) float64 {
	for len(params) > 0 {
		var p []byte
		if i := bytes.IndexByte(params, ';'); i >= 0 {
			p, params = params[:i], params[i+1:]
		} else {
			p, params = params, nil
		}
		k, v, ok := bytes.Cut(bytes.TrimSpace(p), []byte{'='})
		if !ok || !bytes.EqualFold(bytes.TrimSpace(k), []byte("q")) {
			continue
		}
		q, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
		if err != nil || q < 0 || q > 1 || q != q {
			return 1
		}
		return q
	}
	return 1
}
