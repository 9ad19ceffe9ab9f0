package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cadre-dev/cadre/internal/frontmatter"
	"github.com/cadre-dev/cadre/internal/suggest"
	"github.com/cadre-dev/cadre/internal/tmplexec"
	"github.com/cadre-dev/cadre/llm"
)

// Model is a scripted model loaded from a scenario file. It is safe for
// concurrent use: the scenario is immutable after loading and the only
// mutable state, the failure attempt counters, is guarded by a mutex.
type Model struct {
	file   string // the path or name as given, used in every message
	model  string // reported in responses
	agents map[string][]*turn

	mu       sync.Mutex
	attempts map[attemptKey]int
	convs    map[convKey]*convReading // see read
}

// turn is one scripted answer.
type turn struct {
	agent string // the key it was written under ("main", "reviewer", "*")
	index int    // 0-based
	line  int

	thinking *tmpl
	text     *tmpl
	tools    []*toolCall
	usage    *llm.Usage
	delay    time.Duration
	fail     *failure

	// choose holds the alternatives of a turn that picks its answer by
	// the conversation: the first whose when renders true answers.
	choose []*turn
	when   *tmpl // an alternative's condition; nil: always
	// repeat makes an agent's last turn answer every call past it too.
	repeat bool
}

// answers reports whether the turn has something to say once its failures
// are spent; a turn that does not fails every time.
func (t *turn) answers() bool {
	return t.text != nil || t.thinking != nil || len(t.tools) > 0
}

type toolCall struct {
	name  string
	input object
}

type failure struct {
	kind       llm.ErrorKind
	message    string
	times      int
	retryAfter time.Duration
}

// maxScenarioBytes bounds a scenario file: real ones are kilobytes.
const maxScenarioBytes = 4 << 20

// Load reads and validates the scenario file at path. Only a regular file
// of at most maxScenarioBytes is read: a path may name anything, and a
// device or a FIFO would never end (or never start) being read.
func Load(path string) (*Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read scenario: %s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxScenarioBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	if len(data) > maxScenarioBytes {
		return nil, fmt.Errorf("read scenario: %s: larger than %d MiB; a scenario is a small YAML file", path, maxScenarioBytes>>20)
	}
	return Parse(path, data)
}

// Parse validates a scenario held in data; name is the file name used in
// messages and in Name. Every problem found is reported, each with its line.
//
// A problem says where (file:line) and what was wrong in the scenario
// format's own words — never what the file holds: a scenario path may
// name any readable file, and its errors reach logs and model context.
func Parse(name string, data []byte) (*Model, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(name, err)
	}
	// Tool inputs are converted by following aliases: refuse the ones
	// that would never end or would stand for billions of values.
	var aliasErr *frontmatter.AliasError
	if errors.As(frontmatter.CheckAliases(&doc), &aliasErr) {
		return nil, fmt.Errorf("%s:%d: not valid YAML: %s", name, aliasErr.Line, aliasErr.Msg)
	}
	p := &parser{file: name}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty scenario (want a mapping with an \"agents\" key)", name)
	}
	m := &Model{file: name, model: "scripted", agents: map[string][]*turn{}, attempts: map[attemptKey]int{}, convs: map[convKey]*convReading{}}
	root := deref(doc.Content[0])
	fields := p.mapping(root, "", []string{"model", "agents"})
	if fields == nil {
		return nil, p.err()
	}
	if n, ok := fields["model"]; ok {
		if s, ok := p.str(n, "", "model"); ok && s != "" {
			m.model = s
		} else if ok {
			p.errorf(n.Line, "", "model is empty")
		}
	}
	agents, ok := fields["agents"]
	if !ok {
		p.errorf(root.Line, "", "no \"agents\" key: a scenario scripts at least one agent")
		return nil, p.err()
	}
	agents = deref(agents)
	if agents.Kind != yaml.MappingNode {
		p.errorf(agents.Line, "", "agents must be a mapping of agent name to a list of turns")
		return nil, p.err()
	}
	if len(agents.Content) == 0 {
		p.errorf(agents.Line, "", "agents is empty: a scenario scripts at least one agent")
	}
	seen := map[string]int{} // agent name → its line
	for i := 0; i+1 < len(agents.Content); i += 2 {
		k, v := deref(agents.Content[i]), deref(agents.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			p.errorf(k.Line, "", "an agent name must be a non-empty string")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			p.errorf(k.Line, "", "this agent is scripted twice (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		m.agents[k.Value] = p.turns(k.Value, k.Line, v)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return m, nil
}

// parser collects every validation problem so that a fixture with several
// mistakes is fixed in one round.
type parser struct {
	file string
	errs []error
}

func (p *parser) errorf(line int, where, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if where != "" {
		msg = where + ": " + msg
	}
	p.errs = append(p.errs, fmt.Errorf("%s:%d: %s", p.file, line, msg))
}

func (p *parser) err() error { return errors.Join(p.errs...) }

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// mapping checks that n is a mapping whose keys are all in allowed and not
// repeated, and returns its values by key. It returns nil if n is not a
// mapping.
func (p *parser) mapping(n *yaml.Node, where string, allowed []string) map[string]*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n.Line, where, "want a mapping with keys %s, got %s", strings.Join(allowed, ", "), describe(n))
		return nil
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		switch {
		case k.Kind != yaml.ScalarNode:
			p.errorf(k.Line, where, "a key must be a string, got %s", describe(k))
		case !contains(allowed, k.Value):
			// The key itself is not repeated: only the format's own words.
			msg := "unknown key"
			if s, ok := suggest.Closest(k.Value, allowed); ok {
				msg += " (did you mean " + s + "?)"
			} else {
				msg += " (want one of " + strings.Join(allowed, ", ") + ")"
			}
			p.errorf(k.Line, where, "%s", msg)
		case out[k.Value] != nil:
			// An allowed key is one of the format's words, safe to name.
			p.errorf(k.Line, where, "key %q given twice", k.Value)
		default:
			out[k.Value] = n.Content[i+1]
		}
	}
	return out
}

// agentAt names an agent in messages by the line of its key: the key
// itself is the file's content.
func agentAt(line int) string { return fmt.Sprintf("the agent at line %d", line) }

func (p *parser) turns(agent string, line int, n *yaml.Node) []*turn {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n.Line, agentAt(line), "want a list of turns, got %s", describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.errorf(n.Line, agentAt(line), "no turns")
		return nil
	}
	out := make([]*turn, 0, len(n.Content))
	for i, item := range n.Content {
		out = append(out, p.turn(agent, line, i, deref(item), i == len(n.Content)-1))
	}
	return out
}

// answerKeys are the keys of a turn's answer; a turn may have them, or
// choose between alternatives that do.
func answerKeys() []string {
	return []string{"text", "thinking", "tool_use", "usage", "delay", "error"}
}

func turnKeys() []string { return append(answerKeys(), "choose", "repeat") }

func (p *parser) turn(agent string, agentLine, index int, n *yaml.Node, last bool) *turn {
	t := &turn{agent: agent, index: index, line: n.Line}
	where := fmt.Sprintf("turn %d of %s", index+1, agentAt(agentLine))
	f := p.mapping(n, where, turnKeys())
	if f == nil {
		return t
	}
	if v, ok := f["repeat"]; ok {
		t.repeat = p.boolean(v, where, "repeat")
		if t.repeat && !last {
			p.errorf(deref(v).Line, where, "repeat is for an agent's last turn: the calls past it get it again")
		}
	}
	if v, ok := f["choose"]; ok {
		for _, k := range answerKeys() {
			if f[k] != nil {
				p.errorf(n.Line, where, "choose is given with text, thinking, tool_use, usage, delay or error: each alternative gives its own")
				return t
			}
		}
		t.choose = p.alternatives(t, deref(v), where)
		return t
	}
	p.answer(t, f, where)
	return t
}

// alternatives parses choose: a list of answers, each with an optional
// when.
func (p *parser) alternatives(t *turn, n *yaml.Node, where string) []*turn {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n.Line, where, "choose must be a list of alternatives, got %s", describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.errorf(n.Line, where, "choose is an empty list")
		return nil
	}
	var out []*turn
	for i, item := range n.Content {
		item = deref(item)
		alt := &turn{agent: t.agent, index: t.index, line: item.Line}
		w := fmt.Sprintf("%s: alternative %d", where, i+1)
		f := p.mapping(item, w, append(answerKeys(), "when"))
		if f == nil {
			continue
		}
		if v, ok := f["when"]; ok {
			alt.when = p.template(v, w, "when")
		}
		p.answer(alt, f, w)
		out = append(out, alt)
	}
	return out
}

// answer parses the answer keys of a turn or an alternative.
func (p *parser) answer(t *turn, f map[string]*yaml.Node, where string) {
	if v, ok := f["text"]; ok {
		t.text = p.template(v, where, "text")
	}
	if v, ok := f["thinking"]; ok {
		t.thinking = p.template(v, where, "thinking")
	}
	if v, ok := f["tool_use"]; ok {
		t.tools = p.toolUses(deref(v), where)
	}
	if v, ok := f["usage"]; ok {
		t.usage = p.usage(v, where)
	}
	if v, ok := f["delay"]; ok {
		t.delay = p.duration(v, where, "delay")
	}
	hasAnswer := f["text"] != nil || f["thinking"] != nil || f["tool_use"] != nil
	if v, ok := f["error"]; ok {
		t.fail = p.failure(v, where, hasAnswer)
	} else if !hasAnswer {
		p.errorf(t.line, where, "the turn has nothing in it: give text, thinking, tool_use or error")
	}
}

func (p *parser) toolUses(n *yaml.Node, where string) []*toolCall {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n.Line, where, "tool_use must be a list of {name, input}, got %s", describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.errorf(n.Line, where, "tool_use is an empty list")
		return nil
	}
	var out []*toolCall
	for i, item := range n.Content {
		w := fmt.Sprintf("%s: tool_use %d", where, i+1)
		item = deref(item)
		f := p.mapping(item, w, []string{"name", "input"})
		if f == nil {
			continue
		}
		c := &toolCall{}
		if v, ok := f["name"]; ok {
			c.name, _ = p.str(v, w, "name")
		}
		if c.name == "" {
			p.errorf(item.Line, w, "missing name (the tool to call)")
		}
		if v, ok := f["input"]; ok {
			v = deref(v)
			switch {
			case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
				// "input:" with nothing after it is an empty input.
			case v.Kind != yaml.MappingNode:
				p.errorf(v.Line, w, "input must be a mapping, got %s", describe(v))
			default:
				c.input, _ = p.value(v, w+": input").(object)
			}
		}
		out = append(out, c)
	}
	return out
}

func usageKeys() []string {
	return []string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}
}

func (p *parser) usage(n *yaml.Node, where string) *llm.Usage {
	where += ": usage"
	f := p.mapping(n, where, usageKeys())
	if f == nil {
		return nil
	}
	u := &llm.Usage{}
	dst := []*int64{&u.InputTokens, &u.OutputTokens, &u.CacheReadInputTokens, &u.CacheCreationInputTokens}
	for i, key := range usageKeys() {
		if v, ok := f[key]; ok {
			*dst[i] = int64(p.count(v, where, key, 0))
		}
	}
	return u
}

func errorKinds() []string {
	return []string{"rate_limit", "overloaded", "server", "stream_cut", "auth", "bad_request"}
}

func (p *parser) failure(n *yaml.Node, where string, hasAnswer bool) *failure {
	where += ": error"
	f := p.mapping(n, where, []string{"kind", "message", "times", "retry_after"})
	if f == nil {
		return nil
	}
	fl := &failure{times: 1}
	if v, ok := f["kind"]; ok {
		kind, _ := p.str(v, where, "kind")
		if contains(errorKinds(), kind) {
			fl.kind = llm.ErrorKind(kind)
		} else {
			p.errorf(v.Line, where, "unknown kind (want one of %s)", strings.Join(errorKinds(), ", "))
		}
	} else {
		p.errorf(deref(n).Line, where, "missing kind (one of %s)", strings.Join(errorKinds(), ", "))
	}
	if v, ok := f["message"]; ok {
		fl.message, _ = p.str(v, where, "message")
	}
	if fl.message == "" {
		fl.message = fmt.Sprintf("scripted %s failure", fl.kind)
	}
	if v, ok := f["retry_after"]; ok {
		fl.retryAfter = p.duration(v, where, "retry_after")
	}
	if v, ok := f["times"]; ok {
		fl.times = p.count(v, where, "times", 1)
		if !hasAnswer {
			p.errorf(deref(v).Line, where, "times is given but the turn has no text, thinking or tool_use to answer with afterwards (leave times out for a permanent failure)")
		}
	}
	return fl
}

func (p *parser) str(n *yaml.Node, where, key string) (string, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		p.errorf(n.Line, where, "%s must be a string, got %s", key, describe(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) boolean(n *yaml.Node, where, key string) bool {
	n = deref(n)
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		p.errorf(n.Line, where, "%s must be true or false, got %s", key, describe(n))
		return false
	}
	return v
}

func (p *parser) count(n *yaml.Node, where, key string, least int) int {
	n = deref(n)
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		p.errorf(n.Line, where, "%s must be an integer of at least %d, got %s", key, least, describe(n))
		return least
	}
	if v < least {
		p.errorf(n.Line, where, "%s must be an integer of at least %d, got a smaller one", key, least)
		return least
	}
	return v
}

func (p *parser) duration(n *yaml.Node, where, key string) time.Duration {
	s, ok := p.str(n, where, key)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		p.errorf(deref(n).Line, where, "%s: not a duration (write it like 50ms, 2s or 1m)", key)
		return 0
	}
	return d
}

// template parses a string as a Go text/template and checks that it only
// names the fields a template can see, so a typo fails at load, not midway
// through a demo.
func (p *parser) template(n *yaml.Node, where, key string) *tmpl {
	s, ok := p.str(n, where, key)
	if !ok {
		return nil
	}
	t, err := parseTemplate(key, s)
	if err != nil {
		p.errorf(deref(n).Line, where, "%s: %v", key, err)
		return nil
	}
	return t
}

// value converts a YAML node of a tool input to a value: object, list,
// *tmpl for strings, or a JSON-ready scalar.
func (p *parser) value(n *yaml.Node, where string) any {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		obj := object{}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				p.errorf(k.Line, where, "a key must be a string, got %s", describe(k))
				continue
			}
			if seen[k.Value] {
				p.errorf(k.Line, where, "a key is given twice")
				continue
			}
			seen[k.Value] = true
			// Nested values are named by their line, not their keys.
			obj = append(obj, member{key: k.Value, val: p.value(n.Content[i+1], where)})
		}
		return obj
	case yaml.SequenceNode:
		l := list{}
		for i, item := range n.Content {
			l = append(l, p.value(item, fmt.Sprintf("%s[%d]", where, i)))
		}
		return l
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			t, err := parseTemplate("input", n.Value)
			if err != nil {
				p.errorf(n.Line, where, "%v", err)
				return nil
			}
			return t
		case "!!null":
			return nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			p.errorf(n.Line, where, "not a valid value for its tag%s", strings.TrimSuffix(" "+tagName(n), " "))
			return nil
		}
		if _, err := json.Marshal(v); err != nil {
			p.errorf(n.Line, where, "the value cannot be written as JSON")
			return nil
		}
		return v
	}
	p.errorf(n.Line, where, "unsupported value %s", describe(n))
	return nil
}

// describe says what kind of node n is, never what it holds.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing"
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!str":
			return "a string"
		}
		if t := tagName(n); t != "" {
			return "a scalar tagged " + t
		}
		return "a scalar with a tag of its own"
	}
	return "an unsupported node"
}

// tagName is n's tag when it is a YAML standard tag (!!int), else "": a
// tag of the file's own is its content, and is not repeated.
func tagName(n *yaml.Node) string {
	t := n.ShortTag()
	if strings.HasPrefix(t, "!!") && len(t) <= 12 && strings.Trim(t[2:], "abcdefghijklmnopqrstuvwxyz") == "" {
		return t
	}
	return ""
}

// quoted matches what YAML and template errors quote: a value of the
// input, in double, single or back quotes. It and yamlLine are compiled on
// first use, when a script is wrong, not at every command's init.
var quoted = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'[^']*'|`[^`]*`")
})

// redact drops what a library's error quotes of the input, keeping what
// it says was wrong.
func redact(msg string) string { return quoted().ReplaceAllString(msg, "…") }

// yamlLine finds the line in a YAML syntax error.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): `) })

// yamlError reports a file that is not YAML at all, by line when the
// parser gives one.
func yamlError(name string, err error) error {
	msg := err.Error()
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: not valid YAML: %s", name, m[1], redact(msg[len(m[0]):]))
	}
	return fmt.Errorf("%s: not valid YAML: %s", name, redact(strings.TrimPrefix(msg, "yaml: ")))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// tmpl is a templated string. Strings without an action are kept as they
// are, which also spares a template parse for the common case.
type tmpl struct {
	raw string
	t   *tmplexec.Template
}

// data is what a template sees.
type data struct {
	Prompt         string // text of the first user message
	LastUserText   string // text of the newest user message that has text
	LastToolResult string // text of the newest tool_result block, "" if none
	// ToolResults are the texts of the newest user message's tool_result
	// blocks, in call order (several when calls ran in parallel).
	ToolResults []string
	Agent       string // the agent answering ("main" for the main session)
	Turn        int    // 1-based: 1 is the agent's first answer
}

func templateFields() []string {
	return []string{"Prompt", "LastUserText", "LastToolResult", "ToolResults", "Agent", "Turn"}
}

func parseTemplate(name, s string) (*tmpl, error) {
	if !strings.Contains(s, "{{") {
		return &tmpl{raw: s}, nil
	}
	t, err := template.New(name).Funcs(funcs()).Parse(s)
	if err != nil {
		// text/template quotes the text it trips on; keep only its reason.
		reason := redact(err.Error())
		reason = strings.TrimPrefix(reason, "template: "+name+":")
		return nil, fmt.Errorf("not a valid template (line %s)", strings.TrimSpace(reason))
	}
	for _, sub := range t.Templates() {
		if sub.Tree == nil {
			continue
		}
		if err := checkFields(sub.Tree.Root); err != nil {
			return nil, err
		}
	}
	return &tmpl{raw: s, t: tmplexec.New(t, funcs())}, nil
}

func (t *tmpl) render(d *data) (string, error) {
	if t.t == nil {
		return t.raw, nil
	}
	var b bytes.Buffer
	if err := t.t.Execute(&b, d); err != nil {
		return "", err
	}
	return b.String(), nil
}

// checkFields walks a template's parse tree and rejects a field that data
// does not have.
func checkFields(n parse.Node) error {
	check := func(name string) error {
		if !contains(templateFields(), name) {
			msg := "a template field does not exist"
			if s, ok := suggest.Closest(name, templateFields()); ok {
				msg += " (did you mean ." + s + "?)"
			} else {
				msg += " (have ." + strings.Join(templateFields(), ", .") + ")"
			}
			return errors.New(msg)
		}
		return nil
	}
	var kids []parse.Node
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		kids = n.Nodes
	case *parse.ActionNode:
		kids = []parse.Node{n.Pipe}
	case *parse.PipeNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Cmds {
			kids = append(kids, c)
		}
	case *parse.CommandNode:
		if err := checkPattern(n); err != nil {
			return err
		}
		kids = n.Args
	case *parse.ChainNode:
		kids = []parse.Node{n.Node}
	case *parse.IfNode:
		kids = []parse.Node{n.Pipe, n.List, n.ElseList}
	case *parse.RangeNode:
		kids = []parse.Node{n.Pipe, n.List, n.ElseList}
	case *parse.WithNode:
		kids = []parse.Node{n.Pipe, n.List, n.ElseList}
	case *parse.TemplateNode:
		kids = []parse.Node{n.Pipe}
	case *parse.FieldNode:
		return check(n.Ident[0])
	case *parse.VariableNode:
		if n.Ident[0] == "$" && len(n.Ident) > 1 {
			return check(n.Ident[1])
		}
	}
	for _, k := range kids {
		if k == nil {
			continue
		}
		if err := checkFields(k); err != nil {
			return err
		}
	}
	return nil
}

// funcs are the functions a template may call besides text/template's
// builtins: a script that reads tool results needs to look into them.
//
//	match PATTERN S   whether the regular expression matches S
//	find PATTERN S    the first match in S, or its first group when the
//	                  pattern has one; "" when it does not match
//
// The patterns are Go's (RE2) syntax, so a match takes time linear in S.
func funcs() template.FuncMap {
	return template.FuncMap{
		"match": func(pattern, s string) (bool, error) {
			re, err := regexp.Compile(pattern)
			if err != nil {
				return false, errBadPattern
			}
			return re.MatchString(s), nil
		},
		"find": func(pattern, s string) (string, error) {
			re, err := regexp.Compile(pattern)
			if err != nil {
				return "", errBadPattern
			}
			m := re.FindStringSubmatch(s)
			switch {
			case m == nil:
				return "", nil
			case len(m) > 1:
				return m[1], nil
			}
			return m[0], nil
		},
	}
}

// errBadPattern does not quote the pattern: it is the file's content.
var errBadPattern = errors.New("a pattern of match or find is not a valid regular expression")

// checkPattern checks, at load, a pattern of match or find written as a
// literal.
func checkPattern(n *parse.CommandNode) error {
	if len(n.Args) < 2 {
		return nil
	}
	fn, ok := n.Args[0].(*parse.IdentifierNode)
	lit, isLit := n.Args[1].(*parse.StringNode)
	if !ok || !isLit || (fn.Ident != "match" && fn.Ident != "find") {
		return nil
	}
	if _, err := regexp.Compile(lit.Text); err != nil {
		return errBadPattern
	}
	return nil
}

// object is a JSON object with its keys in scenario order, so a tool input
// reads in the transcript as it was written.
type object []member

type member struct {
	key string
	val any
}

type list []any

// renderJSON writes v as JSON, executing the templates in it.
func renderJSON(b *bytes.Buffer, v any, d *data) error {
	switch v := v.(type) {
	case object:
		b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, m.key)
			b.WriteByte(':')
			if err := renderJSON(b, m.val, d); err != nil {
				return fmt.Errorf("%s: %w", m.key, err)
			}
		}
		b.WriteByte('}')
	case list:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := renderJSON(b, e, d); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case *tmpl:
		s, err := v.render(d)
		if err != nil {
			return err
		}
		writeJSON(b, s)
	default:
		writeJSON(b, v)
	}
	return nil
}

// writeJSON writes a scalar without HTML escaping: tool inputs hold code and
// shell commands, where "<" and "&" should read as themselves.
func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)       // scalars were checked to marshal at load time
	b.Truncate(b.Len() - 1) // Encode appends a newline
}
