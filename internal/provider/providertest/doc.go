// Package providertest holds the conformance tests every provider adapter
// runs against a fake server of its own protocol (internal/testkit), so
// that what cadre promises of a model stream holds whichever provider
// serves it.
package providertest
