package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// examples are the root command's: the ways a new user starts.
const examples = `  cadre                                   # the TUI, in a terminal
  cadre "fix the failing test"            # the TUI, with a first message
  cadre -p "what does this repository do?"
  git diff | cadre -p "review this change"
  cadre -p "summarise TODO.md" --output-format json
  cadre -c -p "and now the tests"         # continue this directory's newest session
  cadre --model opus -p "…"               # an alias; or provider:model, e.g. openai:gpt-5
  cadre sessions                          # what ran here; cadre sessions show ID
  cadre serve                             # the HTTP API and the web view`

// environment lists every variable cadre reads (TestHelpNamesEveryVariable
// checks the list against the source).
const environment = `Environment:
  ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN   Anthropic credentials (or providers.* in settings)
  ANTHROPIC_BASE_URL                        another Anthropic endpoint (a gateway, a proxy)
  OPENAI_API_KEY, OPENAI_BASE_URL           the same for OpenAI and compatible servers
  CADRE_HOME                                cadre's state: sessions, tasks, trust (default ~/.cadre)
  CADRE_STORE_URL                           a PostgreSQL URL: share sessions and tasks between processes
  CADRE_SERVE_TOKEN                         the bearer token cadre serve asks for (as --token)
  CADRE_FORK_SUBAGENT                       1: an Agent call without a type forks the caller
  CADRE_COORDINATOR_MODE                    1: coordinator mode, as --coordinator
  CADRE_AGENT_TEAMS                         1: agent teams (also Claude Code's CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS)
  CADRE_WEBFETCH_ALLOW_PRIVATE              1: WebFetch may reach private and loopback addresses
  CADRE_START_TRACE                         1: print when main starts (start-up benchmarks)
  NO_COLOR                                  set (not empty): no colour anywhere
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_*       export traces over OTLP (docs/tracing.md)
  GOGC                                      Go's collector; cadre sets a lean default when unset
`

// setHelp gives the root command its examples, and its help the
// environment after the flags. A help func, not a template: cobra's
// templates go through text/template, whose reflection keeps every method
// of the program linked (bench TestNoMethodLookupByName).
func setHelp(root *cobra.Command) {
	root.Example = examples
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		help(cmd, args)
		if !cmd.HasParent() {
			fmt.Fprint(cmd.OutOrStdout(), "\n"+environment)
		}
	})
}
