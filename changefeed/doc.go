// Package changefeed is the change feed (docs/decisions/0032-change-events.md):
// one event per (commit, entity), written by the storage engine in the
// change's own transaction (storage/changes.go), read by subscriptions
// through a filter, delivered over Server-Sent Events by the HTTP adapter.
//
// The pieces: the event as clients see it (event.go), subscriptions and
// their filters (subscription.go, filter.go, condition.go), the
// watched-model set and the recording decorator of storage.Entities
// (watched.go, recorder.go), the service behind the management API
// (service.go) and the node's tail of the log that wakes and feeds
// attached consumers (hub.go).
package changefeed
