package tmplexec

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"text/template"
	"text/template/parse"
)

// call runs the function called by n with args (nodes) and final (the
// previous command's result in a pipeline). The template's own functions
// come first, then the builtins, as in text/template.
func (s *state) call(dot reflect.Value, n *parse.IdentifierNode, args []parse.Node, final *reflect.Value) reflect.Value {
	s.at(n)
	name := n.Ident
	if fn, ok := s.funcs[name]; ok {
		return s.callFunc(dot, name, fn, args, final)
	}
	switch name {
	case "and", "or":
		return s.andOr(dot, name == "and", args, final)
	case "call":
		vals := s.values(dot, args, final)
		if len(vals) == 0 {
			s.errorf("call of nil")
		}
		fn, _ := indirect(vals[0])
		if !fn.IsValid() || fn.Kind() != reflect.Func {
			s.errorf("non-function %s of type %s", n, vals[0].Type())
		}
		return s.invoke(name, fn, vals[1:])
	}
	b, ok := builtin(name)
	if !ok {
		s.errorf("%q is not a defined function", name)
	}
	v, err := b(s.values(dot, args, final))
	if err != nil {
		s.errorf("error calling %s: %v", name, err)
	}
	return v
}

// values evaluates arguments as they are, for the builtins.
func (s *state) values(dot reflect.Value, args []parse.Node, final *reflect.Value) []reflect.Value {
	out := make([]reflect.Value, 0, len(args)+1)
	for _, a := range args {
		out = append(out, s.evalAny(dot, a))
	}
	if final != nil {
		out = append(out, *final)
	}
	return out
}

// callFunc evaluates args to fn's parameter types and calls it.
func (s *state) callFunc(dot reflect.Value, name string, fn reflect.Value, args []parse.Node, final *reflect.Value) reflect.Value {
	t := fn.Type()
	n := len(args)
	if final != nil {
		n++
	}
	fixed := t.NumIn()
	if t.IsVariadic() {
		fixed--
		if n < fixed {
			s.errorf("wrong number of args for %s: want at least %d got %d", name, fixed, n)
		}
	} else if n != fixed {
		s.errorf("wrong number of args for %s: want %d got %d", name, fixed, n)
	}
	param := func(i int) reflect.Type {
		if i < fixed {
			return t.In(i)
		}
		return t.In(t.NumIn() - 1).Elem()
	}
	vals := make([]reflect.Value, 0, n)
	for i, a := range args {
		vals = append(vals, s.evalArg(dot, param(i), a))
	}
	if final != nil {
		vals = append(vals, s.fit(*final, param(n-1)))
	}
	return s.invokeValues(name, fn, vals)
}

// invoke calls fn with already evaluated values, fitting them to its
// parameters (the call builtin).
func (s *state) invoke(name string, fn reflect.Value, args []reflect.Value) reflect.Value {
	t := fn.Type()
	fixed := t.NumIn()
	if t.IsVariadic() {
		fixed--
		if len(args) < fixed {
			s.errorf("wrong number of args for %s: want at least %d got %d", name, fixed, len(args))
		}
	} else if len(args) != fixed {
		s.errorf("wrong number of args for %s: want %d got %d", name, fixed, len(args))
	}
	vals := make([]reflect.Value, len(args))
	for i, a := range args {
		pt := t.In(min(i, t.NumIn()-1))
		if t.IsVariadic() && i >= fixed {
			pt = t.In(t.NumIn() - 1).Elem()
		}
		vals[i] = s.fit(a, pt)
	}
	return s.invokeValues(name, fn, vals)
}

// invokeValues calls fn; a function that panics or returns a non-nil error
// as its second result stops the execution with that error.
func (s *state) invokeValues(name string, fn reflect.Value, vals []reflect.Value) (out reflect.Value) {
	t := fn.Type()
	if t.NumOut() == 0 || t.NumOut() > 2 || (t.NumOut() == 2 && t.Out(1) != reflect.TypeFor[error]()) {
		s.errorf("can't call %s: a template function returns one value, or a value and an error", name)
	}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(execError); ok {
				panic(e)
			}
			err, ok := r.(error)
			if !ok {
				err = fmt.Errorf("%v", r)
			}
			s.fail("error calling "+name, err)
		}
	}()
	// The functions prompts call most take and give strings; called
	// directly they skip reflect's call frame (a quarter of a
	// notification's rendering).
	switch f := fn.Interface().(type) {
	case func() string:
		if len(vals) == 0 {
			return reflect.ValueOf(f())
		}
	case func(string) string:
		if len(vals) == 1 && vals[0].Type() == stringType {
			return reflect.ValueOf(f(vals[0].String()))
		}
	}
	res := fn.Call(vals)
	if len(res) == 2 && !res[1].IsNil() {
		s.fail("error calling "+name, res[1].Interface().(error))
	}
	return res[0]
}

// andOr evaluates its arguments in order and stops at the first false one
// (and) or true one (or), which it returns; otherwise the last.
func (s *state) andOr(dot reflect.Value, and bool, args []parse.Node, final *reflect.Value) reflect.Value {
	if len(args) == 0 && final == nil {
		s.errorf("wrong number of args: want at least 1 got 0")
	}
	var v reflect.Value
	for _, a := range args {
		v = s.evalAny(dot, a)
		if truth(v) != and {
			return v
		}
	}
	if final != nil {
		v = *final
	}
	return v
}

type builtinFunc = func(args []reflect.Value) (reflect.Value, error)

// builtin is text/template's predefined function called name, but and,
// or and call, which need the state. A switch, not a package-level map:
// a map would be built when the program starts, in every command.
func builtin(name string) (func(args []reflect.Value) (reflect.Value, error), bool) {
	switch name {
	case "not":
		return fixed(1, func(a []reflect.Value) (reflect.Value, error) { return reflect.ValueOf(!truth(a[0])), nil }), true
	case "len":
		return fixed(1, length), true
	case "index":
		return atLeast(1, index), true
	case "slice":
		return atLeast(1, slice), true
	case "print":
		return printer(fmt.Sprint), true
	case "println":
		return printer(fmt.Sprintln), true
	case "printf":
		return atLeast(1, printf), true
	case "html":
		return printer(template.HTMLEscaper), true
	case "js":
		return printer(template.JSEscaper), true
	case "urlquery":
		return printer(template.URLQueryEscaper), true
	case "eq":
		return atLeast(2, eq), true
	case "ne":
		return fixed(2, func(a []reflect.Value) (reflect.Value, error) { return negate(eq(a)) }), true
	case "lt":
		return fixed(2, func(a []reflect.Value) (reflect.Value, error) { return less(a[0], a[1], false) }), true
	case "le":
		return fixed(2, func(a []reflect.Value) (reflect.Value, error) { return less(a[0], a[1], true) }), true
	case "gt":
		return fixed(2, func(a []reflect.Value) (reflect.Value, error) { return negate(less(a[0], a[1], true)) }), true
	case "ge":
		return fixed(2, func(a []reflect.Value) (reflect.Value, error) { return negate(less(a[0], a[1], false)) }), true
	}
	return nil, false
}

func negate(v reflect.Value, err error) (reflect.Value, error) {
	if err != nil {
		return v, err
	}
	return reflect.ValueOf(!v.Bool()), nil
}

func fixed(n int, f builtinFunc) builtinFunc {
	return func(a []reflect.Value) (reflect.Value, error) {
		if len(a) != n {
			return reflect.Value{}, fmt.Errorf("wrong number of args: want %d got %d", n, len(a))
		}
		return f(a)
	}
}

func atLeast(n int, f builtinFunc) builtinFunc {
	return func(a []reflect.Value) (reflect.Value, error) {
		if len(a) < n {
			return reflect.Value{}, fmt.Errorf("wrong number of args: want at least %d got %d", n, len(a))
		}
		return f(a)
	}
}

func interfaces(a []reflect.Value) []any {
	out := make([]any, len(a))
	for i, v := range a {
		if v.IsValid() && v.CanInterface() {
			out[i] = v.Interface()
		}
	}
	return out
}

func printer(f func(...any) string) builtinFunc {
	return func(a []reflect.Value) (reflect.Value, error) {
		return reflect.ValueOf(f(interfaces(a)...)), nil
	}
}

func printf(a []reflect.Value) (reflect.Value, error) {
	v, _ := indirect(a[0])
	if v.Kind() != reflect.String {
		return reflect.Value{}, fmt.Errorf("printf's format is %s, not a string", kindOf(a[0]))
	}
	return reflect.ValueOf(fmt.Sprintf(v.String(), interfaces(a[1:])...)), nil
}

func kindOf(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	return v.Type().String()
}

func length(a []reflect.Value) (reflect.Value, error) {
	v, isNil := indirect(a[0])
	if isNil && v.Kind() != reflect.Map && v.Kind() != reflect.Slice {
		return reflect.Value{}, fmt.Errorf("len of nil pointer")
	}
	switch v.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		return reflect.ValueOf(v.Len()), nil
	}
	return reflect.Value{}, fmt.Errorf("len of type %s", kindOf(v))
}

// toInt is an index argument as an int.
func toInt(v reflect.Value) (int, error) {
	v, _ = indirect(v)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int(v.Uint()), nil
	case reflect.Invalid:
		return 0, fmt.Errorf("cannot index slice/array with nil")
	}
	return 0, fmt.Errorf("cannot index slice/array with type %s", v.Type())
}

func index(a []reflect.Value) (reflect.Value, error) {
	item, _ := indirect(a[0])
	if !item.IsValid() {
		return reflect.Value{}, fmt.Errorf("index of untyped nil")
	}
	for _, ix := range a[1:] {
		item, _ = indirect(item)
		switch item.Kind() {
		case reflect.Array, reflect.Slice, reflect.String:
			i, err := toInt(ix)
			if err != nil {
				return reflect.Value{}, err
			}
			if i < 0 || i >= item.Len() {
				return reflect.Value{}, fmt.Errorf("index out of range: %d", i)
			}
			item = item.Index(i)
		case reflect.Map:
			k := ix
			if !k.IsValid() {
				k = reflect.Zero(item.Type().Key())
			}
			if k.Kind() == reflect.Interface && !k.IsNil() {
				k = k.Elem()
			}
			if !k.Type().AssignableTo(item.Type().Key()) {
				if !k.Type().ConvertibleTo(item.Type().Key()) {
					return reflect.Value{}, fmt.Errorf("value has type %s; should be %s", k.Type(), item.Type().Key())
				}
				k = k.Convert(item.Type().Key())
			}
			if v := item.MapIndex(k); v.IsValid() {
				item = v
			} else {
				item = reflect.Zero(item.Type().Elem())
			}
		case reflect.Invalid:
			return reflect.Value{}, fmt.Errorf("index of untyped nil")
		default:
			return reflect.Value{}, fmt.Errorf("can't index item of type %s", item.Type())
		}
	}
	return item, nil
}

func slice(a []reflect.Value) (reflect.Value, error) {
	item, _ := indirect(a[0])
	if !item.IsValid() {
		return reflect.Value{}, fmt.Errorf("slice of untyped nil")
	}
	if len(a) > 4 {
		return reflect.Value{}, fmt.Errorf("too many slice indexes: %d", len(a)-1)
	}
	var capacity int
	switch item.Kind() {
	case reflect.String:
		if len(a) == 4 {
			return reflect.Value{}, fmt.Errorf("cannot 3-index slice a string")
		}
		capacity = item.Len()
	case reflect.Array, reflect.Slice:
		capacity = item.Cap()
	default:
		return reflect.Value{}, fmt.Errorf("can't slice item of type %s", item.Type())
	}
	ix := []int{0, item.Len()}
	for i, v := range a[1:] {
		n, err := toInt(v)
		if err != nil {
			return reflect.Value{}, err
		}
		if n < 0 || n > capacity {
			return reflect.Value{}, fmt.Errorf("index out of range: %d", n)
		}
		if i < 2 {
			ix[i] = n
		} else {
			ix = append(ix, n)
		}
	}
	if ix[0] > ix[1] {
		return reflect.Value{}, fmt.Errorf("invalid slice index: %d > %d", ix[0], ix[1])
	}
	if len(ix) == 3 {
		if ix[1] > ix[2] {
			return reflect.Value{}, fmt.Errorf("invalid slice index: %d > %d", ix[1], ix[2])
		}
		return item.Slice3(ix[0], ix[1], ix[2]), nil
	}
	return item.Slice(ix[0], ix[1]), nil
}

// kind classes for comparisons: ints and uints compare across kinds.
type class int

const (
	classOther class = iota
	classBool
	classInt
	classUint
	classFloat
	classComplex
	classString
)

func classify(v reflect.Value) class {
	switch v.Kind() {
	case reflect.Bool:
		return classBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return classInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return classUint
	case reflect.Float32, reflect.Float64:
		return classFloat
	case reflect.Complex64, reflect.Complex128:
		return classComplex
	case reflect.String:
		return classString
	}
	return classOther
}

func elem(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Interface && !v.IsNil() {
		return v.Elem()
	}
	return v
}

// eq reports whether a[0] equals any of a[1:].
func eq(a []reflect.Value) (reflect.Value, error) {
	x := elem(a[0])
	for _, y := range a[1:] {
		y = elem(y)
		same, err := equal(x, y)
		if err != nil {
			return reflect.Value{}, err
		}
		if same {
			return reflect.ValueOf(true), nil
		}
	}
	return reflect.ValueOf(false), nil
}

func equal(x, y reflect.Value) (bool, error) {
	if !x.IsValid() || !y.IsValid() {
		nilish := func(v reflect.Value) bool { return !v.IsValid() || (canBeNil(v.Type()) && v.IsNil()) }
		return nilish(x) && nilish(y), nil
	}
	cx, cy := classify(x), classify(y)
	switch {
	case cx == classInt && cy == classUint:
		return x.Int() >= 0 && uint64(x.Int()) == y.Uint(), nil
	case cx == classUint && cy == classInt:
		return y.Int() >= 0 && uint64(y.Int()) == x.Uint(), nil
	case cx != cy:
		return false, errBadComparison
	}
	switch cx {
	case classBool:
		return x.Bool() == y.Bool(), nil
	case classInt:
		return x.Int() == y.Int(), nil
	case classUint:
		return x.Uint() == y.Uint(), nil
	case classFloat:
		return x.Float() == y.Float(), nil
	case classComplex:
		return x.Complex() == y.Complex(), nil
	case classString:
		return x.String() == y.String(), nil
	}
	if x.Type() != y.Type() {
		return false, errBadComparison
	}
	if !x.Type().Comparable() {
		return false, fmt.Errorf("non-comparable type %s: %w", x.Type(), errBadComparisonType)
	}
	return x.Equal(y), nil
}

// less reports x < y, or x <= y with orEqual.
func less(x, y reflect.Value, orEqual bool) (reflect.Value, error) {
	x, y = elem(x), elem(y)
	if !x.IsValid() || !y.IsValid() {
		return reflect.Value{}, errNoComparison
	}
	cx, cy := classify(x), classify(y)
	var c int
	switch {
	case cx == classInt && cy == classUint:
		if x.Int() < 0 {
			c = -1
		} else {
			c = cmp.Compare(uint64(x.Int()), y.Uint())
		}
	case cx == classUint && cy == classInt:
		if y.Int() < 0 {
			c = 1
		} else {
			c = cmp.Compare(x.Uint(), uint64(y.Int()))
		}
	case cx != cy:
		return reflect.Value{}, errBadComparison
	case cx == classInt:
		c = cmp.Compare(x.Int(), y.Int())
	case cx == classUint:
		c = cmp.Compare(x.Uint(), y.Uint())
	case cx == classFloat:
		c = cmp.Compare(x.Float(), y.Float())
	case cx == classString:
		c = cmp.Compare(x.String(), y.String())
	default:
		return reflect.Value{}, errBadComparisonType
	}
	return reflect.ValueOf(c < 0 || (orEqual && c == 0)), nil
}

// sortedKeys are m's keys in order, so that a range over a map prints the
// same every time (text/template's order for the key kinds that have one).
func sortedKeys(m reflect.Value) []reflect.Value {
	keys := m.MapKeys()
	slices.SortStableFunc(keys, func(a, b reflect.Value) int {
		ca, cb := classify(a), classify(b)
		switch {
		case ca != cb:
			return cmp.Compare(ca, cb)
		case ca == classInt:
			return cmp.Compare(a.Int(), b.Int())
		case ca == classUint:
			return cmp.Compare(a.Uint(), b.Uint())
		case ca == classFloat:
			return cmp.Compare(a.Float(), b.Float())
		case ca == classString:
			return cmp.Compare(a.String(), b.String())
		case ca == classBool:
			return cmp.Compare(btoi(a.Bool()), btoi(b.Bool()))
		}
		return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
	})
	return keys
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
