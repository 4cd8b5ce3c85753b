package fast

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestReadmeCountsTheDocumentsOperations: the README's operation count is
// the document's, contract and extensions apart (issue 26: it said 87 when
// the document had 97).
func TestReadmeCountsTheDocumentsOperations(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`OpenAPI 3\.1 of all (\d+) operations: the wire contract's (\d+) and (\d+) svc extensions`).FindSubmatch(b)
	if m == nil {
		t.Fatal("README does not say how many operations the OpenAPI document has")
	}
	contract, ext := 0, 0
	for _, r := range newTestServer(t).Routes() {
		if isExtension(r.OpID) {
			ext++
		} else {
			contract++
		}
	}
	total, _ := strconv.Atoi(string(m[1]))
	c, _ := strconv.Atoi(string(m[2]))
	e, _ := strconv.Atoi(string(m[3]))
	if total != contract+ext || c != contract || e != ext {
		t.Errorf("README says %d operations (%d + %d); the document has %d (%d + %d)", total, c, e, contract+ext, contract, ext)
	}
}
