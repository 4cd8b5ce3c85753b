// Package infer is the schema inference engine behind entity models: it reads
// sample JSON documents through a streaming tokenizer, merges what it sees into
// a cumulative Model, writes and reads that model as SIMPLE_VIEW (spec §4.6),
// and checks entities against a locked model under a change level.
//
// The Model is keyed the way SIMPLE_VIEW is: node paths ($, $.a[*], …) hold
// object parts (dotted field keys with per-field type sets) and detached array
// parts. Keeping the export's shape as the in-memory shape is what makes
// export → import → export byte-identical, and makes a literal field named
// "a.b" and a nested a→b merge the same way the export would print them.
//
// A Model is not safe for concurrent mutation; concurrent readers (export,
// Validate) are safe while nobody mutates it.
package infer
