// Package excerpt quotes what a file said in the messages about it. A
// message names a bad value so that its author can find it, but must not
// repeat a whole value (or, through it, a whole file): messages reach
// logs, terminals and model context, and a value can hold anything the
// file's author put there.
package excerpt
