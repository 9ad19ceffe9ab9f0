package frontmatter

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *File
		body string
	}{
		{
			name: "no frontmatter",
			in:   "\nJust a prompt.\n",
			want: &File{Lines: []string{"", "Just a prompt.", ""}},
			body: "Just a prompt.",
		},
		{
			name: "frontmatter and body",
			in:   "---\nname: a\nmodel: b\n---\n\nBody.\n",
			want: &File{
				Lines:       []string{"---", "name: a", "model: b", "---", "", "Body.", ""},
				Found:       true,
				Frontmatter: []string{"name: a", "model: b"},
				BodyStart:   4,
			},
			body: "Body.",
		},
		{
			name: "byte-order mark, CRLF and trailing blanks on the fences",
			in:   "\ufeff--- \r\nname: a\r\n---\t\r\nBody.",
			want: &File{
				Lines:       []string{"--- ", "name: a", "---\t", "Body."},
				Found:       true,
				Frontmatter: []string{"name: a"},
				BodyStart:   3,
			},
			body: "Body.",
		},
		{
			name: "empty frontmatter, no body",
			in:   "---\n---",
			want: &File{Lines: []string{"---", "---"}, Found: true, Frontmatter: []string{}, BodyStart: 2},
		},
		{
			name: "a later --- is part of the body",
			in:   "text\n---\nmore",
			want: &File{Lines: []string{"text", "---", "more"}},
			body: "text\n---\nmore",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Split([]byte(tt.in))
			if err != nil {
				t.Fatalf("Split: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Split (-want +got):\n%s", diff)
			}
			if b := got.Body(); b != tt.body {
				t.Errorf("Body() = %q, want %q", b, tt.body)
			}
		})
	}
}

func TestSplitNotClosed(t *testing.T) {
	if _, err := Split([]byte("---\nname: a\nbody")); !errors.Is(err, ErrNotClosed) {
		t.Fatalf("Split of an unclosed block: err = %v, want ErrNotClosed", err)
	}
}

func TestQuoteValues(t *testing.T) {
	tests := []struct {
		name       string
		src        string
		flowAsText bool
		want       string
		lines      []int
	}{
		{
			name:  "colon in a value",
			src:   "name: a\ndescription: Use this: when \"x\" \\ y",
			want:  "name: a\ndescription: \"Use this: when \\\"x\\\" \\\\ y\"",
			lines: []int{2},
		},
		{
			name: "valid lines left alone",
			src:  "name: a\ntools: [Read, Write]",
			want: "name: a\ntools: [Read, Write]",
		},
		{
			name: "quoted and block values left alone",
			src:  "a: \"x: y\" z: w\nb: |x: y",
			want: "a: \"x: y\" z: w\nb: |x: y",
		},
		{
			name: "flow value left alone by default",
			src:  "argument-hint: [pr] [priority]",
			want: "argument-hint: [pr] [priority]",
		},
		{
			name:       "balanced flow value quoted as text",
			src:        "argument-hint: [pr] [priority]",
			flowAsText: true,
			want:       "argument-hint: \"[pr] [priority]\"",
			lines:      []int{1},
		},
		{
			name:       "unclosed flow value left alone even as text",
			src:        "argument-hint: [pr: x",
			flowAsText: true,
			want:       "argument-hint: [pr: x",
		},
		{
			name:  "nested lines are not top-level fields",
			src:   "hooks:\n  x: a: b\nd: e: f",
			want:  "hooks:\n  x: a: b\nd: \"e: f\"",
			lines: []int{3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lines := QuoteValues(tt.src, tt.flowAsText)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQuotedWhat(t *testing.T) {
	if got, want := QuotedWhat([]int{2}, Offset), "the value on line 3"; got != want {
		t.Errorf("one line: %q, want %q", got, want)
	}
	if got, want := QuotedWhat([]int{2, 4}, Offset), "the values on lines 3, 5"; got != want {
		t.Errorf("two lines: %q, want %q", got, want)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{"{a: 1}", "a mapping"},
		{"[1, 2]", "a list"},
		{"~", "nothing"},
		{"true", "the boolean true"},
		{"3", "the number 3"},
		{"1.5", "the number 1.5"},
		{"hello", `"hello"`},
	}
	for _, tt := range tests {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(tt.src), &doc); err != nil {
			t.Fatalf("yaml %q: %v", tt.src, err)
		}
		if got := Describe(doc.Content[0]); got != tt.want {
			t.Errorf("Describe(%s) = %q, want %q", tt.src, got, tt.want)
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("a: &x [1]\nb: *x"), &doc); err != nil {
		t.Fatal(err)
	}
	alias := doc.Content[0].Content[3]
	if got := Describe(alias); got != "a list" {
		t.Errorf("Describe(alias) = %q, want it to follow the alias to a list", got)
	}
}
