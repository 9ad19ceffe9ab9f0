package tmplexec

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"text/template"
	"time"
)

type inner struct {
	Name  string
	Count int
	Tags  []string
}

// label is a string type of its own, shout one that prints itself: the
// fast paths for plain strings (print, string functions) must leave both
// to the general ones.
type (
	label string
	shout string
)

func (s shout) String() string { return strings.ToUpper(string(s)) + "!" }

type outer struct {
	inner
	Label    label
	Shout    shout
	Title    string
	Ptr      *inner
	Nil      *inner
	Items    []inner
	Map      map[string]int
	IntMap   map[int]string
	Any      any
	Dur      time.Duration
	When     time.Time
	Empty    []string
	Flag     bool
	U        uint8
	F        float64
	private  string
	Children map[string]*inner
}

func data() outer {
	in := inner{Name: "n", Count: 3, Tags: []string{"a", "b"}}
	return outer{
		inner:    in,
		Label:    "lab",
		Shout:    "hey",
		Title:    "T <&>",
		Ptr:      &inner{Name: "p", Count: -1},
		Items:    []inner{in, {Name: "m", Count: 0}},
		Map:      map[string]int{"b": 2, "a": 1, "c": 3},
		IntMap:   map[int]string{3: "three", 1: "one", 2: "two"},
		Any:      map[string]any{"k": []int{1, 2}},
		Dur:      90 * time.Second,
		When:     time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC),
		Flag:     true,
		U:        7,
		F:        2.5,
		private:  "x",
		Children: map[string]*inner{"x": {Name: "cx"}},
	}
}

var funcs = template.FuncMap{
	"upper":    strings.ToUpper,
	"join":     strings.Join,
	"add":      func(a, b int) int { return a + b },
	"fails":    func() (string, error) { return "", errors.New("boom") },
	"panics":   func() string { panic("oops") },
	"variadic": func(sep string, xs ...string) string { return strings.Join(xs, sep) },
	"fn":       func() func(int) int { return func(x int) int { return x * 2 } },
	"hello":    func() string { return "hi" },
}

// TestMatchesTextTemplate runs each template through text/template's own
// executor and through this package's, and wants the same text (or both
// failing).
func TestMatchesTextTemplate(t *testing.T) {
	cases := []string{
		`plain text`,
		`{{.Title}} {{.Name}} {{.Count}} {{.Ptr.Name}} {{.Ptr}}`,
		`{{.Dur}} {{.When}} {{.Flag}} {{.U}} {{.F}} {{.Any}} {{.Empty}} {{.Nil}}`,
		`{{if .Flag}}yes{{else}}no{{end}} {{if .Empty}}x{{else if .Name}}name{{end}}`,
		`{{with .Ptr}}{{.Name}}{{end}}{{with .Nil}}x{{else}}none{{end}}{{with $x := .Name}}{{$x}}{{end}}`,
		`{{range .Tags}}[{{.}}]{{end}}{{range $i, $t := .Tags}}{{if $i}}, {{end}}{{$i}}={{$t}}{{end}}`,
		`{{range .Map}}{{.}}{{end}} {{range $k, $v := .Map}}{{$k}}:{{$v}} {{end}}{{range $k, $v := .IntMap}}{{$k}}{{$v}}{{end}}`,
		`{{range .Empty}}x{{else}}empty{{end}}{{range .Nil}}x{{else}}nil{{end}}`,
		`{{range .Items}}{{.Name}}{{if eq .Count 0}}!{{break}}{{end}}{{end}}|{{range .Tags}}{{if eq . "a"}}{{continue}}{{end}}{{.}}{{end}}`,
		`{{range 3}}{{.}}{{end}} {{range $i := 2}}{{$i}}{{end}}`,
		`{{- range .Items}}
- {{.Name}}{{if .Tags}} ({{join .Tags ", "}}){{end}}
{{- end}}`,
		`{{$x := 1}}{{if .Flag}}{{$x = 2}}{{end}}{{$x}} {{$.Title}}`,
		`{{upper .Name}} {{.Name | upper}} {{add 1 2}} {{add .Count 4 | add 1}} {{variadic "-" "a" "b"}} {{variadic ","}}`,
		`{{len .Tags}} {{len .Map}} {{len "héllo"}} {{index .Tags 1}} {{index .Map "b"}} {{index .Map "zz"}} {{index .Any "k" 1}}`,
		`{{slice .Tags 1}} {{slice "hello" 1 3}} {{slice .Tags 0 1 2}}`,
		`{{print 1 "a" 2}} {{println "x"}}{{printf "%05.1f|%s|%d" .F .Name .Count}} {{printf "%v" .Tags}}`,
		`{{html .Title}} {{js "a'b"}} {{urlquery "a b&c"}}`,
		`{{eq 1 1}} {{eq .Name "n" "m"}} {{ne .Count 3}} {{lt 1 2}} {{le 2 2}} {{gt .F 1.0}} {{ge "a" "b"}} {{eq .U 7}} {{lt -1 .U}}`,
		`{{and 1 0 "x"}} {{or 0 "" "y"}} {{not .Flag}} {{and .Flag .Name}} {{or .Nil .Ptr.Name}}`,
		`{{call fn 4}} {{call (fn) 5}}`,
		`{{(index .Items 1).Name}} {{.Children.x.Name}} {{.Map.a}} {{.Map.zz}}`,
		`{{define "item"}}<{{.Name}}>{{end}}{{template "item" .Ptr}}{{template "item" index .Items 0}}{{block "b" .}}B{{.Title}}{{end}}`,
		`{{/* a comment */}}a{{- " b " -}}c {{1.5}} {{1e3}} {{0x10}} {{'a'}} {{-3}} {{true}} {{"s"}}`,
		`{{.Name}} {{.Count}}{{"\n"}}`,
		`{{.Label}} {{.Shout}} {{upper .Label}} {{upper .Shout}} {{hello}} {{hello | upper}} {{upper "x" | upper}}`,
		// Failures.
		`{{.Missing}}`,
		`{{.private}}`,
		`{{.Nil.Name}}`,
		`{{fails}}`,
		`{{panics}}`,
		`{{add 1}}`,
		`{{add "x" 1}}`,
		`{{index .Tags 5}}`,
		`{{lt .Tags 1}}`,
		`{{eq .Name 1}}`,
		`{{len 3}}`,
		`{{.Name 1}}`,
		`{{template "nope"}}`,
		`{{$x := .Name}}{{$x.Foo}}`,
	}
	for _, text := range cases {
		t.Run(text, func(t *testing.T) {
			tt := template.Must(template.New("t").Funcs(funcs).Parse(text))
			var want, got bytes.Buffer
			wantErr := tt.Execute(&want, data())
			gotErr := New(tt, funcs).Execute(&got, data())
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("text/template: %q, err %v\ntmplexec:      %q, err %v", want.String(), wantErr, got.String(), gotErr)
			}
			if wantErr == nil && got.String() != want.String() {
				t.Errorf("got  %q\nwant %q", got.String(), want.String())
			}
			if gotErr != nil && !strings.Contains(gotErr.Error(), "template: t:") {
				t.Errorf("error %q does not say where", gotErr)
			}
		})
	}
}

// A method the data has is not called: that is what keeps the linker
// from keeping every method (doc.go). The error says so.
func TestNoMethods(t *testing.T) {
	tt := template.Must(template.New("m").Parse(`{{.String}}`))
	err := New(tt, nil).Execute(new(bytes.Buffer), time.Second)
	if err == nil || !strings.Contains(err.Error(), "can't evaluate field String in type time.Duration") {
		t.Fatalf("err = %v, want a field error", err)
	}
}

func TestFuncErrorWrapped(t *testing.T) {
	boom := errors.New("boom")
	tt := template.Must(template.New("e").Funcs(template.FuncMap{"f": func() (int, error) { return 0, boom }}).Parse(`x{{f}}`))
	var b bytes.Buffer
	err := New(tt, template.FuncMap{"f": func() (int, error) { return 0, boom }}).Execute(&b, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap boom", err)
	}
	if b.String() != "x" {
		t.Errorf("written before the failure: %q, want %q", b.String(), "x")
	}
}

func TestLookup(t *testing.T) {
	set := template.Must(template.New("a").Parse(`{{define "b"}}B{{.}}{{end}}A{{template "b" 1}}`))
	x := New(set, nil)
	var b bytes.Buffer
	if err := x.Lookup("b").Execute(&b, 2); err != nil || b.String() != "B2" {
		t.Fatalf("b: %q, %v", b.String(), err)
	}
	if x.Lookup("c") != nil {
		t.Error("Lookup(c) is not nil")
	}
	b.Reset()
	if err := x.Execute(&b, nil); err != nil || b.String() != "AB1" {
		t.Fatalf("a: %q, %v", b.String(), err)
	}
}

func TestRecursionBounded(t *testing.T) {
	tt := template.Must(template.New("r").Parse(`{{define "loop"}}{{template "loop" .}}{{end}}{{template "loop" .}}`))
	err := New(tt, nil).Execute(new(bytes.Buffer), nil)
	if err == nil || !strings.Contains(err.Error(), "maximum template depth") {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkNotificationShape executes a template shaped like a background
// task's notification (internal/subagent/notify): strings from a map,
// functions of strings, numbers. Every background child renders one.
func BenchmarkNotificationShape(b *testing.B) {
	tt := template.Must(template.New("n").Funcs(funcs).Parse(`<task-notification>
<task-id>{{.ID}}</task-id>
{{if .OutputFile}}<output-file>{{.OutputFile}}</output-file>
{{end}}<status>{{.Status}}</status>
<summary>Agent "{{upper .Description}}" {{.Verb}}</summary>
<note>{{hello}}</note>
<result>{{upper .Result}}</result>
<usage>tokens: {{.Tokens}}, duration: {{.Duration}}</usage>
</task-notification>`))
	x := New(tt, funcs)
	d := map[string]any{"ID": "a1b2c3", "OutputFile": "/tmp/a1b2c3.output", "Status": "completed", "Description": "part 17",
		"Verb": "completed", "Result": "done", "Tokens": 1240, "Duration": 12 * time.Millisecond}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := x.Execute(&buf, d); err != nil {
			b.Fatal(err)
		}
	}
}
