// Package tmplexec executes templates parsed by text/template without
// text/template's executor.
//
// text/template's executor looks a template's field names up as methods
// too (reflect.Value.MethodByName). A binary in which that call can be
// reached must keep every exported method of every type it might convert
// to an interface, because the linker can no longer tell which of them a
// template will name: for cadre that was 29 MB of a 108 MB binary, mapped
// by every command, and a larger set of type data the runtime walks at
// start-up (docs/performance.md, "Start-up"). This package walks the same
// parse trees but resolves a name only as a struct field or a map key, so
// the binary keeps only the methods it calls.
//
// Parse with text/template (its syntax, its errors, its FuncMap), then
// execute with New(t, funcs).Execute. Everything text/template's
// executor does is supported except calling a method of the data: actions,
// pipelines, variables, if/else if/with/range (slices, arrays, maps in key
// order, integers) with break and continue, {{template}} and {{block}},
// the functions given, and the builtins and, or, not, len, index, slice,
// print, printf, println, eq, ne, lt, le, gt, ge, html, js, urlquery and
// call.
package tmplexec
