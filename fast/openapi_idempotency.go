package fast

// idempotentOps are the operations whose handlers honour an
// Idempotency-Key (fast/idempotency.go): entity creates (single,
// collection, NDJSON stream) and single-entity updates and transitions.
var idempotentOps = map[string]bool{
	"create":                   true,
	"createCollection":         true,
	opCreateNDJSON:             true,
	"updateSingle":             true,
	"updateSingleWithLoopback": true,
	"patchSingle":              true,
	"patchSingleWithLoopback":  true,
}

// idempotencyKeyParam documents the header on those operations. It is an
// svc extension: the wire contract svc is compatible with has no such
// header, so the parameter carries the same x-svc-extension mark as an
// extension operation does.
func idempotencyKeyParam() *Parameter {
	p := header("Idempotency-Key",
		extensionDescription+" 1 to 255 visible ASCII characters, per tenant. A repeat with the same method, URI and body "+
			"within SVC_IDEMPOTENCY_RETENTION answers the first response again with `Idempotent-Replayed: true` and writes nothing; "+
			"the same key with another request answers 422 IDEMPOTENCY_KEY_REUSED; while the first is still running, 409 "+
			"IDEMPOTENCY_CONFLICT (retry later). Not with X-Tx-Token. See help `entities.idempotency`.",
		&Schema{Type: SchemaType{"string"}, MinLength: ptr(1), MaxLength: ptr(255)}, false)
	p.Extension = true
	return p
}
