package fast

import "unsafe"

// s2b views a string as bytes without copying; the result must not be
// modified.
func s2b(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
