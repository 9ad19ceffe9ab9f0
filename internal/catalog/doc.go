// Package catalog is the table of models cadre knows (models.json,
// embedded): each model's id and the other names that reach it, the short
// aliases (sonnet, opus, haiku, fable), context windows, output limits,
// list prices and lifecycle — active, deprecated until a date, or retired.
//
// It is data, kept in one reviewable file, so that a new model generation
// is a change of that file and its test, not of code scattered over the
// provider, the pricing and the compaction packages that read it.
package catalog
