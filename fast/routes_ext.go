package fast

// extensionRoutes are svc's own operations beyond the wire contract's 87.
// Each API area that extends the contract lists its routes here (one line
// per area, the routes themselves in the area's file); the OpenAPI document
// marks each with `x-svc-extension: true` and says so in its description,
// and the area's help topic names it as an extension. Their docs come from
// extensionDocs, merged into opDocTable.
func extensionRoutes() []Route {
	var rs []Route
	rs = append(rs, ndjsonRoutes()...)
	rs = append(rs, sqlExtensionRoutes()...)
	rs = append(rs, streamDataExtRoutes()...)
	rs = append(rs, searchCompatRoutes()...)
	rs = append(rs, oauthExtensionRoutes()...)
	rs = append(rs, adminSwitchRoutes()...)
	rs = append(rs, changeFeedExtRoutes()...)
	return rs
}

// extensionDocs are the OpenAPI docs of extensionRoutes, one map per area.
func extensionDocs() []map[string]opDoc {
	return []map[string]opDoc{ndjsonDocs(), sqlExtensionDocs(), streamDataExtDocs(), searchCompatDocs(), oauthExtensionDocs(), adminSwitchDocs(), changeFeedExtDocs()}
}

// extensionDescription prefixes an extension operation's description.
const extensionDescription = "svc extension (not part of the wire contract svc is compatible with)."

// isExtension reports whether opID is one of extensionRoutes.
func isExtension(opID string) bool {
	for _, r := range extensionRoutes() {
		if r.OpID == opID {
			return true
		}
	}
	return false
}
