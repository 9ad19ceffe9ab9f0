package skill

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Name is the tool's name, as in Claude Code.
const Name = "Skill"

// Input is the tool's input, as in Claude Code.
type Input struct {
	Skill string `json:"skill" jsonschema:"The name of a skill from the list of available skills. Do not guess names."`
	Args  string `json:"args,omitempty" jsonschema:"Optional arguments for the skill"`
}

//go:embed skill.md
var description string

// Invocable lists the skills the model may invoke: every skill of set
// without disable-model-invocation, by name.
func Invocable(set *command.Set) []command.Command {
	var out []command.Command
	for _, c := range set.All() {
		if c.Kind == command.KindSkill && !c.DisableModelInvocation {
			out = append(out, c)
		}
	}
	return out
}

// Fork runs a `context: fork` skill as a fork of the calling agent,
// continuing the turn that invoked it (S-F2), and returns the fork's
// answer as the tool's result. prompt is the skill's text, arguments
// filled in.
type Fork func(ctx context.Context, env tool.Env, c command.Command, prompt string) (tool.Result, error)

// Forks reports whether a skill runs as a true fork of its caller: it says
// context: fork and names neither an agent (it then runs as that agent)
// nor a model (a fork shares its caller's model, or there is no prompt
// cache to share).
func Forks(c command.Command) bool {
	return c.Context == "fork" && c.Agent == "" && c.Model == ""
}

// Tool returns the Skill tool over set's invocable skills, or nil when
// there are none (a tool that can do nothing is not offered). Invoking a
// skill grants its allowed-tools to the calling session through grants
// (nil: no grants). A skill that Forks is run by fork (nil: it enters the
// conversation like any other).
func Tool(set *command.Set, grants *permission.Grants, fork Fork) tool.Tool {
	skills := Invocable(set)
	if len(skills) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(description))
	b.WriteString("\n")
	for _, c := range skills {
		fmt.Fprintf(&b, "\n- %s: %s", c.Name, oneLine(c.Description))
	}
	info := tool.Info{Name: Name, Description: b.String(), Access: tool.AccessRead}
	return tool.New(info, func(ctx context.Context, env tool.Env, in Input) (tool.Result, error) {
		name := strings.TrimPrefix(strings.TrimSpace(in.Skill), "/")
		c, ok := set.Get(name)
		if !ok || c.Kind != command.KindSkill || c.DisableModelInvocation {
			var names []string
			for _, s := range skills {
				names = append(names, s.Name)
			}
			return tool.Errorf("Unknown skill %q: the skills you can invoke are %s.", in.Skill, strings.Join(names, ", ")), nil
		}
		if fork != nil && Forks(c) {
			// The fork gets the allowed-tools itself (unless the command
			// may grant nothing); the caller's session is not granted them.
			return fork(ctx, env, c, Text(c, in.Args))
		}
		if grants != nil && len(c.AllowedTools) > 0 && !c.NoGrant {
			var rules []permission.Rule
			for _, raw := range c.AllowedTools {
				r, err := permission.ParseRule(raw)
				if err != nil {
					// Loading accepted it; a rule cadre cannot read grants
					// nothing rather than failing the skill.
					continue
				}
				rules = append(rules, r)
			}
			grants.Add(env.SessionID, rules...)
		}
		return tool.Result{
			Content: []llm.Block{llm.Text("Launching skill: " + c.Name), llm.Text(Text(c, in.Args))},
			Meta:    map[string]any{"commandName": c.Name, "allowedTools": c.AllowedTools},
		}, nil
	})
}

// Text is what a skill brings into a conversation: where its folder is
// (its scripts and references are relative to it) and its instructions
// with args filled in.
func Text(c command.Command, args string) string {
	return fmt.Sprintf("Base directory for this skill: %s\n\n%s", filepath.Dir(c.Path), strings.TrimSpace(c.Expand(args)))
}

// Preload is the text of an agent file's skills field, for the agent's
// first message: each named skill's Text under a line that names it.
// Names that are not skills come back in missing.
func Preload(set *command.Set, names []string) (text string, missing []string) {
	var parts []string
	for _, n := range names {
		c, ok := set.Get(strings.TrimPrefix(strings.TrimSpace(n), "/"))
		if !ok || c.Kind != command.KindSkill {
			missing = append(missing, n)
			continue
		}
		parts = append(parts, fmt.Sprintf("<skill name=%q>\n%s\n</skill>", c.Name, Text(c, "")))
	}
	if len(parts) == 0 {
		return "", missing
	}
	return "The skills below were loaded for this task; follow them where they apply.\n\n" + strings.Join(parts, "\n\n"), missing
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 250 {
		s = string(r[:249]) + "…"
	}
	return s
}
