package fast

// ErrorStatus is the HTTP status the API answers a catalogue error code
// with, and whether the code is retryable whatever the error says. The
// gRPC CRUD RPCs classify their failures with it (CLIENT_ERROR for 4xx,
// SERVER_ERROR for 5xx), so both doors agree.
func ErrorStatus(code string) (status int, retryable bool) {
	st, ok := codeStatus[code]
	if !ok {
		st = 400
	}
	return st, retryableCodes[code]
}
