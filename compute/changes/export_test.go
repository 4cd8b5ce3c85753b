package changes

// Test access to the message parsers (fuzz_test.go).
var (
	ParseAttach = parseAttach
	ParseAck    = parseAck
)
