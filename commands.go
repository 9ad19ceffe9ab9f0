package cadre

import "github.com/cadre-dev/cadre/internal/command"

// SlashCommand is a slash command or skill a user can run as /Name.
type SlashCommand struct {
	Name, Description, ArgumentHint string
	// Skill is set for a skill (a folder with SKILL.md), not a command file.
	Skill bool
}

// Commands lists the slash commands and skills the runtime found, in the
// order it lists them: front ends offer them (the Agent SDK's
// supportedCommands, completion in an editor).
func (r *Runtime) Commands() []SlashCommand {
	var out []SlashCommand
	for _, c := range r.app.Commands.All() {
		out = append(out, SlashCommand{Name: c.Name, Description: c.Description, ArgumentHint: c.ArgumentHint, Skill: c.Kind == command.KindSkill})
	}
	return out
}

// ReloadCommands reads the slash commands and skills from disk again, as
// the Agent SDK's reloadSkills asks: files added, changed or removed since
// the runtime opened take effect for the next prompt and the Skill tool's
// next call. It returns the commands now in effect and the problems of
// files that did not load. The Skill tool itself is offered or not as it
// was when the runtime opened.
func (r *Runtime) ReloadCommands() ([]SlashCommand, []string) {
	var problems []string
	for _, p := range r.app.Commands.Reload(r.app.Cwd, r.app.Cfg.Home) {
		problems = append(problems, "command "+p.Error())
	}
	return r.Commands(), problems
}
