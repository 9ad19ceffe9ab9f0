package tmplexec

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/template"
	"text/template/parse"
)

// Template is a parsed text/template with the functions it was parsed with.
type Template struct {
	set   *template.Template
	funcs map[string]reflect.Value
}

// New prepares t for execution. funcs must be the FuncMap t was parsed
// with (text/template keeps it unexported); t's associated templates are
// reachable with {{template}}.
func New(t *template.Template, funcs template.FuncMap) *Template {
	fs := make(map[string]reflect.Value, len(funcs))
	for name, f := range funcs {
		v := reflect.ValueOf(f)
		if v.Kind() != reflect.Func {
			panic(fmt.Sprintf("tmplexec: value for %q is %T, not a function", name, f))
		}
		fs[name] = v
	}
	return &Template{set: t, funcs: fs}
}

// Name is the template's name.
func (t *Template) Name() string { return t.set.Name() }

// Lookup returns the associated template called name, or nil.
func (t *Template) Lookup(name string) *Template {
	s := t.set.Lookup(name)
	if s == nil {
		return nil
	}
	return &Template{set: s, funcs: t.funcs}
}

// maxDepth bounds {{template}} recursion, which the parser cannot rule out.
const maxDepth = 10000

// Execute writes the template applied to data to w. A failure stops at the
// node it happened at and says where; what was written before it stays
// written, as with text/template.
func (t *Template) Execute(w io.Writer, data any) (err error) {
	if t.set.Tree == nil || t.set.Tree.Root == nil {
		return fmt.Errorf("template: %q is an incomplete or empty template", t.Name())
	}
	dot := reflect.ValueOf(data)
	s := &state{funcs: t.funcs, set: t.set, tree: t.set.Tree, name: t.Name(), w: w, vars: []variable{{"$", dot}}}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(execError)
			if !ok {
				panic(r)
			}
			err = e.err
		}
	}()
	s.walk(dot, t.set.Tree.Root)
	return nil
}

// execError carries a failure up through the walk to Execute.
type execError struct{ err error }

type variable struct {
	name  string
	value reflect.Value
}

// flow is what a walk asks of the range around it.
type flow int

const (
	flowOn flow = iota
	flowBreak
	flowContinue
)

type state struct {
	funcs map[string]reflect.Value
	set   *template.Template
	tree  *parse.Tree
	name  string
	w     io.Writer
	node  parse.Node // the node being executed, for messages
	vars  []variable
	depth int
}

func (s *state) errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if s.node == nil {
		panic(execError{fmt.Errorf("template: %s: %s", s.name, msg)})
	}
	loc, ctx := s.tree.ErrorContext(s.node)
	panic(execError{fmt.Errorf("template: %s: executing %q at <%s>: %s", loc, s.name, ctx, msg)})
}

// fail reports err, wrapped, so that callers can still match it.
func (s *state) fail(what string, err error) {
	loc, ctx := "", ""
	if s.node != nil {
		loc, ctx = s.tree.ErrorContext(s.node)
	}
	panic(execError{fmt.Errorf("template: %s: executing %q at <%s>: %s: %w", loc, s.name, ctx, what, err)})
}

func (s *state) at(n parse.Node) { s.node = n }

func (s *state) mark() int { return len(s.vars) }
func (s *state) pop(m int) { s.vars = s.vars[:m] }
func (s *state) push(name string, v reflect.Value) {
	s.vars = append(s.vars, variable{name, v})
}

func (s *state) setVar(name string, v reflect.Value) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			s.vars[i].value = v
			return
		}
	}
	s.errorf("undefined variable: %s", name)
}

func (s *state) varValue(name string) reflect.Value {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i].value
		}
	}
	s.errorf("undefined variable: %s", name)
	return reflect.Value{}
}

func (s *state) walk(dot reflect.Value, node parse.Node) flow {
	s.at(node)
	switch n := node.(type) {
	case *parse.ActionNode:
		v := s.evalPipeline(dot, n.Pipe)
		if len(n.Pipe.Decl) == 0 {
			s.print(v)
		}
	case *parse.BreakNode:
		return flowBreak
	case *parse.ContinueNode:
		return flowContinue
	case *parse.CommentNode:
	case *parse.IfNode:
		return s.walkIf(dot, &n.BranchNode, false)
	case *parse.WithNode:
		return s.walkIf(dot, &n.BranchNode, true)
	case *parse.ListNode:
		for _, c := range n.Nodes {
			if f := s.walk(dot, c); f != flowOn {
				return f
			}
		}
	case *parse.RangeNode:
		s.walkRange(dot, n)
	case *parse.TemplateNode:
		s.walkTemplate(dot, n)
	case *parse.TextNode:
		if _, err := s.w.Write(n.Text); err != nil {
			s.fail("write", err)
		}
	default:
		s.errorf("unknown node: %s", node)
	}
	return flowOn
}

// walkIf runs an if or, when with is set, a with: the pipeline's variables
// live until its end, else branch included.
func (s *state) walkIf(dot reflect.Value, b *parse.BranchNode, with bool) flow {
	defer s.pop(s.mark())
	v := s.evalPipeline(dot, b.Pipe)
	if truth(v) {
		if with {
			dot = v
		}
		return s.walk(dot, b.List)
	}
	if b.ElseList != nil {
		return s.walk(dot, b.ElseList)
	}
	return flowOn
}

func (s *state) walkRange(dot reflect.Value, r *parse.RangeNode) {
	defer s.pop(s.mark())
	v, _ := indirect(s.pipeValue(dot, r.Pipe))
	decl := r.Pipe.Decl
	// once runs the body for one element; false stops the range.
	once := func(key, elem reflect.Value) bool {
		m := s.mark()
		defer s.pop(m)
		switch {
		case len(decl) == 1 && r.Pipe.IsAssign:
			s.setVar(decl[0].Ident[0], elem)
		case len(decl) == 1:
			s.push(decl[0].Ident[0], elem)
		case len(decl) == 2 && r.Pipe.IsAssign:
			s.setVar(decl[0].Ident[0], key)
			s.setVar(decl[1].Ident[0], elem)
		case len(decl) == 2:
			s.push(decl[0].Ident[0], key)
			s.push(decl[1].Ident[0], elem)
		}
		return s.walk(elem, r.List) != flowBreak
	}
	n := 0
	switch v.Kind() {
	case reflect.Array, reflect.Slice:
		n = v.Len()
		for i := range n {
			if !once(reflect.ValueOf(i), v.Index(i)) {
				break
			}
		}
	case reflect.Map:
		keys := sortedKeys(v)
		n = len(keys)
		for _, k := range keys {
			if !once(k, v.MapIndex(k)) {
				break
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if len(decl) > 1 {
			s.at(r)
			s.errorf("can't use %s to iterate over more than one variable", v)
		}
		var count int64
		if v.CanInt() {
			count = v.Int()
		} else {
			count = int64(v.Uint())
		}
		for i := int64(0); i < count; i++ {
			n++
			if !once(reflect.ValueOf(i).Convert(v.Type()), reflect.ValueOf(i).Convert(v.Type())) {
				break
			}
		}
	case reflect.Invalid:
		// Ranging over nothing: the else branch.
	default:
		s.at(r)
		s.errorf("range can't iterate over %s (this executor ranges over slices, arrays, maps and integers)", v.Type())
	}
	if n == 0 && r.ElseList != nil {
		s.walk(dot, r.ElseList)
	}
}

func (s *state) walkTemplate(dot reflect.Value, n *parse.TemplateNode) {
	t := s.set.Lookup(n.Name)
	if t == nil || t.Tree == nil {
		s.errorf("no such template %q", n.Name)
	}
	if s.depth >= maxDepth {
		s.errorf("exceeded maximum template depth (%d)", maxDepth)
	}
	data := s.pipeValue(dot, n.Pipe)
	inner := &state{funcs: s.funcs, set: s.set, tree: t.Tree, name: n.Name, w: s.w, vars: []variable{{"$", data}}, depth: s.depth + 1}
	inner.walk(data, t.Tree.Root)
}

// evalPipeline evaluates a pipeline and declares or assigns its variables.
func (s *state) evalPipeline(dot reflect.Value, p *parse.PipeNode) reflect.Value {
	v := s.pipeValue(dot, p)
	if p == nil {
		return v
	}
	for _, d := range p.Decl {
		if p.IsAssign {
			s.setVar(d.Ident[0], v)
		} else {
			s.push(d.Ident[0], v)
		}
	}
	return v
}

// pipeValue evaluates a pipeline's commands, each one's result the last
// argument of the next.
func (s *state) pipeValue(dot reflect.Value, p *parse.PipeNode) reflect.Value {
	if p == nil {
		return reflect.Value{}
	}
	s.at(p)
	var v reflect.Value
	for i, c := range p.Cmds {
		var final *reflect.Value
		if i > 0 {
			final = &v
		}
		v = s.evalCommand(dot, c, final)
		// An interface{} holding a value is that value.
		if v.Kind() == reflect.Interface && v.Type().NumMethod() == 0 && !v.IsNil() {
			v = v.Elem()
		}
	}
	return v
}

func (s *state) evalCommand(dot reflect.Value, c *parse.CommandNode, final *reflect.Value) reflect.Value {
	first := c.Args[0]
	switch n := first.(type) {
	case *parse.FieldNode:
		return s.fieldChain(dot, n.Ident, c.Args, final)
	case *parse.ChainNode:
		s.at(n)
		if n.Node.Type() == parse.NodeNil {
			s.errorf("indirection through explicit nil in %s", n)
		}
		return s.fieldChain(s.evalAny(dot, n.Node), n.Field, c.Args, final)
	case *parse.IdentifierNode:
		return s.call(dot, n, c.Args[1:], final)
	case *parse.VariableNode:
		s.at(n)
		v := s.varValue(n.Ident[0])
		if len(n.Ident) == 1 {
			s.noArgs(n, c.Args, final)
			return v
		}
		return s.fieldChain(v, n.Ident[1:], c.Args, final)
	case *parse.PipeNode:
		s.noArgs(n, c.Args, final)
		return s.evalPipeline(dot, n)
	}
	s.at(first)
	s.noArgs(first, c.Args, final)
	switch n := first.(type) {
	case *parse.BoolNode:
		return reflect.ValueOf(n.True)
	case *parse.DotNode:
		return dot
	case *parse.NilNode:
		s.errorf("nil is not a command")
	case *parse.NumberNode:
		return s.number(n)
	case *parse.StringNode:
		return reflect.ValueOf(n.Text)
	}
	s.errorf("can't evaluate command %q", first)
	return reflect.Value{}
}

func (s *state) noArgs(n parse.Node, args []parse.Node, final *reflect.Value) {
	if len(args) > 1 || final != nil {
		s.errorf("can't give argument to non-function %s", n)
	}
}

// fieldChain looks up a chain of names starting at v; only the last may be
// given arguments, and a field takes none.
func (s *state) fieldChain(v reflect.Value, names []string, args []parse.Node, final *reflect.Value) reflect.Value {
	for i, name := range names {
		if i == len(names)-1 && (len(args) > 1 || final != nil) {
			s.errorf("%s is not a method but has arguments", name)
		}
		v = s.field(v, name)
	}
	return v
}

// field is v's field or map entry called name. Methods are not looked up:
// that is the point of this package (doc.go).
func (s *state) field(v reflect.Value, name string) reflect.Value {
	if !v.IsValid() {
		return reflect.Value{}
	}
	v, isNil := indirect(v)
	if isNil {
		s.errorf("nil pointer evaluating %s.%s", v.Type(), name)
	}
	switch v.Kind() {
	case reflect.Struct:
		f, ok := v.Type().FieldByName(name)
		if !ok {
			break
		}
		if !f.IsExported() {
			s.errorf("%s is an unexported field of struct type %s", name, v.Type())
		}
		fv, err := v.FieldByIndexErr(f.Index)
		if err != nil {
			s.errorf("%v", err)
		}
		return fv
	case reflect.Map:
		key := reflect.ValueOf(name)
		if !key.Type().AssignableTo(v.Type().Key()) {
			break
		}
		// A missing key is no value ("<no value>" when printed), as in
		// text/template's default.
		return v.MapIndex(key)
	}
	s.errorf("can't evaluate field %s in type %s", name, v.Type())
	return reflect.Value{}
}

// evalAny evaluates an argument node to the value it holds.
func (s *state) evalAny(dot reflect.Value, n parse.Node) reflect.Value {
	s.at(n)
	switch n := n.(type) {
	case *parse.DotNode:
		return dot
	case *parse.NilNode:
		s.errorf("evalAny: nil")
	case *parse.FieldNode:
		return s.fieldChain(dot, n.Ident, nil, nil)
	case *parse.VariableNode:
		v := s.varValue(n.Ident[0])
		return s.fieldChain(v, n.Ident[1:], nil, nil)
	case *parse.ChainNode:
		return s.fieldChain(s.evalAny(dot, n.Node), n.Field, nil, nil)
	case *parse.PipeNode:
		return s.evalPipeline(dot, n)
	case *parse.IdentifierNode:
		return s.call(dot, n, nil, nil)
	case *parse.BoolNode:
		return reflect.ValueOf(n.True)
	case *parse.NumberNode:
		return s.number(n)
	case *parse.StringNode:
		return reflect.ValueOf(n.Text)
	}
	s.errorf("can't handle argument %s", n)
	return reflect.Value{}
}

// evalArg evaluates an argument for a parameter of type t.
func (s *state) evalArg(dot reflect.Value, t reflect.Type, n parse.Node) reflect.Value {
	s.at(n)
	switch a := n.(type) {
	case *parse.NilNode:
		if canBeNil(t) {
			return reflect.Zero(t)
		}
		s.errorf("cannot assign nil to %s", t)
	case *parse.BoolNode:
		if t.Kind() == reflect.Bool {
			return reflect.ValueOf(a.True).Convert(t)
		}
	case *parse.StringNode:
		if t.Kind() == reflect.String {
			return reflect.ValueOf(a.Text).Convert(t)
		}
	case *parse.NumberNode:
		switch {
		case a.IsInt && (t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64):
			v := reflect.New(t).Elem()
			if v.OverflowInt(a.Int64) {
				s.errorf("%s overflows %s", a.Text, t)
			}
			v.SetInt(a.Int64)
			return v
		case a.IsUint && (t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr):
			v := reflect.New(t).Elem()
			if v.OverflowUint(a.Uint64) {
				s.errorf("%s overflows %s", a.Text, t)
			}
			v.SetUint(a.Uint64)
			return v
		case a.IsFloat && (t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64):
			return reflect.ValueOf(a.Float64).Convert(t)
		case a.IsComplex && (t.Kind() == reflect.Complex64 || t.Kind() == reflect.Complex128):
			return reflect.ValueOf(a.Complex128).Convert(t)
		}
	}
	return s.fit(s.evalAny(dot, n), t)
}

// fit makes v usable as a value of type t, or fails.
func (s *state) fit(v reflect.Value, t reflect.Type) reflect.Value {
	if !v.IsValid() {
		if t == nil || canBeNil(t) {
			return reflect.Zero(t)
		}
		s.errorf("invalid value; expected %s", t)
	}
	if t == nil || v.Type().AssignableTo(t) {
		return v
	}
	if v.Kind() == reflect.Interface && !v.IsNil() {
		if e := v.Elem(); e.Type().AssignableTo(t) {
			return e
		}
	}
	if v.Kind() == reflect.Pointer && !v.IsNil() && v.Type().Elem().AssignableTo(t) {
		return v.Elem()
	}
	if v.CanAddr() && reflect.PointerTo(v.Type()).AssignableTo(t) {
		return v.Addr()
	}
	s.errorf("wrong type for value; expected %s; got %s", t, v.Type())
	return reflect.Value{}
}

func canBeNil(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return true
	}
	return false
}

// number is a constant's value as an untyped Go constant would default:
// int, then float64, then complex128.
func (s *state) number(n *parse.NumberNode) reflect.Value {
	floaty := n.IsFloat && !strings.HasPrefix(n.Text, "0x") && !strings.HasPrefix(n.Text, "0X") &&
		!strings.HasPrefix(n.Text, "'") && strings.ContainsAny(n.Text, ".eEpP")
	switch {
	case n.IsComplex && !n.IsFloat && !n.IsInt:
		return reflect.ValueOf(n.Complex128)
	case floaty:
		return reflect.ValueOf(n.Float64)
	case n.IsInt:
		if int64(int(n.Int64)) != n.Int64 {
			s.errorf("%s overflows int", n.Text)
		}
		return reflect.ValueOf(int(n.Int64))
	case n.IsUint:
		s.errorf("%s overflows int", n.Text)
	case n.IsFloat:
		return reflect.ValueOf(n.Float64)
	case n.IsComplex:
		return reflect.ValueOf(n.Complex128)
	}
	s.errorf("can't handle number %s", n.Text)
	return reflect.Value{}
}

// print writes v as text/template prints an action's value.
func (s *state) print(v reflect.Value) {
	if v.Kind() == reflect.Pointer {
		v, _ = indirect(v)
	}
	if !v.IsValid() {
		s.write("<no value>")
		return
	}
	errorType, stringerType := reflect.TypeFor[error](), reflect.TypeFor[fmt.Stringer]()
	if !v.Type().Implements(errorType) && !v.Type().Implements(stringerType) {
		pt := reflect.PointerTo(v.Type())
		if v.CanAddr() && (pt.Implements(errorType) || pt.Implements(stringerType)) {
			v = v.Addr()
		} else if k := v.Kind(); k == reflect.Chan || k == reflect.Func {
			s.errorf("can't print %s of type %s", s.node, v.Type())
		}
	}
	if !v.CanInterface() {
		s.errorf("can't print an unexported value of type %s", v.Type())
	}
	if v.Kind() == reflect.String && v.Type() == stringType {
		// What fmt.Fprint would write, without its boxing and state: most
		// of what a prompt prints is a plain string.
		s.write(v.String())
		return
	}
	if _, err := fmt.Fprint(s.w, v.Interface()); err != nil {
		s.fail("write", err)
	}
}

// stringType is the type a fast path of print and of calls knows.
var stringType = reflect.TypeFor[string]()

func (s *state) write(text string) {
	if _, err := io.WriteString(s.w, text); err != nil {
		s.fail("write", err)
	}
}

// indirect follows pointers and interfaces to a value that is neither; it
// reports whether it stopped at a nil one.
func indirect(v reflect.Value) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return v, true
		}
		v = v.Elem()
	}
	return v, false
}

// truth is text/template's notion of true: a non-zero value.
func truth(v reflect.Value) bool {
	if !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() > 0
	case reflect.Bool:
		return v.Bool()
	case reflect.Complex64, reflect.Complex128:
		return v.Complex() != 0
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		return !v.IsNil()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() != 0
	case reflect.Float32, reflect.Float64:
		return v.Float() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() != 0
	case reflect.Struct:
		return true
	}
	return false
}

// The comparison builtins' failures: constants, so that the package has
// nothing to initialise when the program starts.
type compareError string

func (e compareError) Error() string { return string(e) }

const (
	errBadComparisonType = compareError("invalid type for comparison")
	errBadComparison     = compareError("incompatible types for comparison")
	errNoComparison      = compareError("missing argument for comparison")
)
