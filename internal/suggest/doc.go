// Package suggest picks the "did you mean" candidate for a misspelt name,
// so every loader that warns about an unknown key or field offers the
// same kind of hint.
package suggest
