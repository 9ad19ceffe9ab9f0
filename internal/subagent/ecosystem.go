package subagent

import (
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/memory"
	"github.com/cadre-dev/cadre/internal/skill"
	"github.com/cadre-dev/cadre/llm"
)

// memoryPrompt is the system prompt section of the child's memory; a
// memory that cannot be read says so there, and the run goes on.
func (s *Service) memoryPrompt(def agent.Definition, ch *child) string {
	p, err := memory.Prompt(ch.memory, memory.Root(def.Memory, s.cfg.MainCwd, ch.policy.Home))
	if err != nil {
		s.log.Warn("read an agent's memory", "agent", def.Name, "err", err)
		return fmt.Sprintf("# Your memory\n\nYour memory directory is %s, but it could not be read: %v", ch.memory, err)
	}
	return p
}

// firstMessage is the child's first user message around its task prompt:
// the definition's initialPrompt first, then the prompt, then the skills
// its skills field preloads. Names that are not skills are warnings.
func (s *Service) firstMessage(def agent.Definition, prompt string) (llm.Message, []string) {
	msg := llm.Message{Role: llm.RoleUser}
	if ip := strings.TrimSpace(def.InitialPrompt); ip != "" {
		msg.Content = append(msg.Content, llm.Text(ip))
	}
	msg.Content = append(msg.Content, llm.Text(prompt))
	if len(def.Skills) == 0 {
		return msg, nil
	}
	text, missing := skill.Preload(s.cfg.Commands, def.Skills)
	if text != "" {
		msg.Content = append(msg.Content, llm.Text(text))
	}
	var warnings []string
	for _, m := range missing {
		warnings = append(warnings, fmt.Sprintf("skill %q in the agent's skills field was not found (skills are .claude/skills/<name>/SKILL.md or .cadre/skills/<name>/SKILL.md); it was not loaded", m))
	}
	return msg, warnings
}
