// Package predicate is the condition language shared by search, delete by
// condition, grouped statistics and workflow criteria.
//
// Parse reads condition JSON and checks its structure; Expr.Compile checks
// it against a model's Schema and yields an immutable Condition. A
// Condition evaluates against an entity's raw JSON document and Meta
// (Match, Eval) with no allocation for plain paths, and renders itself as
// a parameterised PostgreSQL WHERE fragment over a jsonb column (SQL).
//
// Semantics are those of docs/decisions/0020-conditions.md, with the
// compatible system's bugs fixed:
//
//   - Q1: group operator NOT works (exactly one child); AND and OR are
//     case-sensitive; anything else is 400 INVALID_CONDITION.
//   - unknown or missing operatorType is 400 INVALID_CONDITION,
//     NOT_EQUALS is an alias of NOT_EQUAL (real clients).
//   - Q2: function conditions work: Eval hands them to a FunctionCaller.
//   - Q3: array conditions work: "values" (alias "value"), path $.x known
//     when $.x[*] is, element types of $.x[*], positional EQUALS.
//   - Q4: a jsonPath must start with $, else INVALID_FIELD_PATH; the same
//     parsed path is used for validation and evaluation.
//   - Q5: [*] is existential at every hop, scalar arrays included
//     ($.tags[*] EQUALS "x"); IS_NULL is "no non-null value at the path".
//   - Q6: numbers compare by exact decimal value (10.0 equals 10), never
//     through float64; this subsumes the integer-bucket rounding rules.
//   - Q7: text operators on creationDate/lastUpdateTime never match.
//   - Q8: a null operand on a binary operator is accepted, matches nothing.
//   - a [n] subscript is supported (looked up in the schema as [*]).
//   - MATCHES_PATTERN is RE2, anchored, compiled once, at most MaxRegexLen
//     bytes and MaxRegexInst instructions; LIKE at most MaxLikeLen bytes
//     (both 400 INVALID_CONDITION); a condition has at most
//     MaxNodes nodes and MaxDepth levels.
package predicate
