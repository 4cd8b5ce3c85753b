// Package infer is the schema inference engine behind entity models: it reads
// sample JSON documents through a streaming tokenizer, merges what it sees into
// a cumulative Model, writes and reads that model as SIMPLE_VIEW (docs/decisions/0011-simple-view-export-import.md),
// writes it as a JSON Schema, and checks entities against a locked model under
// a change level.
//
// Documents are read from their raw bytes: a validation pass runs the
// tokenizer over the whole document (syntax, UTF-8, Limits) before the model
// is touched, then an inference pass walks the bytes again with pooled
// buffers. No map[string]any trees are built; a document whose shape the
// model has seen allocates nothing.
//
// The rules are docs/decisions/0010-schema-inference.md and docs/decisions/0011-simple-view-export-import.md; where
// no other source spoke, this package decided:
//
//   - an empty array prints (NULL x 0); a later non-empty array replaces it;
//   - a field seen null and also as an object or array prints no NULL entry,
//     and Check accepts null on every field the model knows, because
//     SIMPLE_VIEW cannot record that a container was also seen null;
//   - null elements next to objects or arrays are absorbed; other primitive
//     elements next to objects print under .f[*] per index; primitives next
//     to arrays of arrays are not printed ((ARRAY_ELEMENT x n) takes the key);
//   - arrays of arrays of arrays continue as detached nodes $.a[*][*]…;
//   - a member name holding '.' is the same field as the nested path it
//     prints as; a name containing "[*]" is rejected (it cannot be read back);
//   - the root may be an object or an array of objects (each one sample);
//   - Check with a change level counts a value the model already admits (13
//     in a DOUBLE field) as no change, where the compatible system demands TYPE;
//   - JSON_SCHEMA writes anyOf (not the compatible system's oneOf), and every
//     alternative admits null.
//
// A Model is not safe for concurrent mutation; concurrent readers (export,
// Check) are safe while nobody mutates it.
package infer
