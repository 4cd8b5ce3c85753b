// Package sqlschema is the SQL Schema API's domain: it generates SQL table
// configurations from an inferred entity model (genTables), merges edited
// configurations with a model's current shape (updateTables), validates and
// stores named schemas per tenant, and hands every saved schema to the
// storage engine as a list of views (PostgreSQL builds real views; the
// memory engine keeps the configuration only).
//
// Tables come from the SIMPLE_VIEW node walk of package infer
// (infer.Model.Nodes), so the tables of a model and its export never
// disagree: the root "$", one table per array of objects, detached tables
// ("…^") for the primitive elements of arrays of arrays, and "json".
package sqlschema
