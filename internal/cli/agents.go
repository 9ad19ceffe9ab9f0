package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cadre-dev/cadre"
	"github.com/spf13/cobra"
)

func agentsCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	var cwd string
	list := &cobra.Command{
		Use:   "agents",
		Short: "list subagent definitions with their source and validity; 'agents show NAME' prints one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withRuntime(cmd, cwd, func(rt *cadre.Runtime) error {
				entries := rt.Agents()
				if asJSON {
					type row struct {
						Name        string   `json:"name"`
						Source      string   `json:"source"`
						Format      string   `json:"format"`
						Path        string   `json:"path,omitempty"`
						Status      string   `json:"status"`
						ShadowedBy  string   `json:"shadowed_by,omitempty"`
						Error       string   `json:"error,omitempty"`
						Warnings    []string `json:"warnings,omitempty"`
						Description string   `json:"description"`
					}
					var rows []row
					for _, e := range entries {
						r := row{Name: e.Agent.Name, Source: string(e.Source), Format: string(e.Agent.Format), Path: e.Path,
							Status: status(e.Active, e.Err), ShadowedBy: e.ShadowedBy, Warnings: e.Warnings, Description: e.Agent.Description}
						if e.Err != nil {
							r.Error = e.Err.Error()
						}
						rows = append(rows, r)
					}
					return writeJSON(stdout, rows)
				}
				tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tSTATUS\tSOURCE\tDESCRIPTION")
				for _, e := range entries {
					d := e.Agent
					where := string(e.Source)
					if e.Path != "" {
						where += " " + e.Path
					}
					desc := oneLine(d.Description)
					switch {
					case e.Err != nil:
						desc = "error: " + oneLine(e.Err.Error())
					case !e.Active && e.ShadowedBy != "":
						desc = "overridden by " + e.ShadowedBy
					}
					if len(desc) > 80 {
						desc = desc[:79] + "…"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Name, status(e.Active, e.Err), where, desc)
					for _, w := range e.Warnings {
						fmt.Fprintf(tw, "\t\t\twarning: %s\n", oneLine(w))
					}
				}
				return tw.Flush()
			})
		},
	}
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "print the definition in effect for NAME",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(cmd, cwd, func(rt *cadre.Runtime) error {
				var names []string
				var found *cadre.AgentEntry
				for _, e := range rt.Agents() {
					if e.Active {
						names = append(names, e.Agent.Name)
						if strings.EqualFold(e.Agent.Name, args[0]) {
							found = &e
						}
					}
				}
				if found == nil {
					return fmt.Errorf("no agent named %q (defined: %s)", args[0], strings.Join(names, ", "))
				}
				d := found.Agent
				if asJSON {
					return writeJSON(stdout, agentOf(*found))
				}
				tools := "all available"
				if len(d.Tools) > 0 {
					tools = strings.Join(d.Tools, ", ")
				}
				fields := [][2]string{
					{"name", d.Name}, {"description", d.Description}, {"source", string(found.Source) + " " + found.Path},
					{"format", string(d.Format)}, {"tools", tools}, {"disallowedTools", strings.Join(d.DisallowedTools, ", ")},
					{"model", orDefault(d.Model, "(default chain: subagents.model, then the parent's)")},
					{"permissionMode", orDefault(string(d.PermissionMode), "(acceptEdits, capped by the parent's)")},
					{"maxTurns", fmt.Sprint(d.MaxTurns)}, {"mode", orDefault(string(d.Mode), "all")},
					{"hidden", fmt.Sprint(d.Hidden)}, {"background", fmt.Sprint(d.Background)}, {"isolation", string(d.Isolation)},
				}
				if d.Workspace != nil {
					fields = append(fields, [2]string{"workspace", string(d.Workspace.Mode) + " " + d.Workspace.Path})
				}
				if d.URL != "" {
					fields = append(fields, [2]string{"url", d.URL})
				}
				tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
				for _, f := range fields {
					if f[1] != "" {
						fmt.Fprintf(tw, "%s\t%s\n", f[0], f[1])
					}
				}
				for _, w := range found.Warnings {
					fmt.Fprintf(tw, "warning\t%s\n", w)
				}
				tw.Flush()
				if d.Prompt != "" {
					fmt.Fprintf(stdout, "\n%s\n", strings.TrimSpace(d.Prompt))
				}
				return nil
			})
		},
	}
	for _, c := range []*cobra.Command{list, show} {
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
		c.Flags().StringVar(&cwd, "cwd", "", "working directory (default: the current one)")
	}
	list.AddCommand(show)
	return list
}

func status(active bool, err error) string {
	switch {
	case err != nil:
		return "invalid"
	case active:
		return "active"
	}
	return "overridden"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// agentJSON is a definition as `cadre agents show --json` writes it.
type agentJSON struct {
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	Prompt          string   `json:"prompt"`
	Tools           []string `json:"tools"` // null: every available tool
	DisallowedTools []string `json:"disallowed_tools,omitempty"`
	Model           string   `json:"model,omitempty"`
	PermissionMode  string   `json:"permission_mode,omitempty"`
	Background      bool     `json:"background"`
	Isolation       string   `json:"isolation,omitempty"`
	MaxTurns        int      `json:"max_turns,omitempty"`
	Hidden          bool     `json:"hidden"`
	Mode            string   `json:"mode,omitempty"`
	Workspace       *struct {
		Mode string `json:"mode,omitempty"`
		Path string `json:"path,omitempty"`
	} `json:"workspace,omitempty"`
	TaskRules []taskRuleJSON `json:"task_rules,omitempty"`
	Allow     []string       `json:"allow,omitempty"`
	Ask       []string       `json:"ask,omitempty"`
	Deny      []string       `json:"deny,omitempty"`
	Format    string         `json:"format,omitempty"`
	URL       string         `json:"url,omitempty"`
	// HeaderNames are the names of the headers sent to a remote agent:
	// their values are credentials, which a listing never shows.
	HeaderNames []string `json:"header_names,omitempty"`
	Source      string   `json:"source"`
	Path        string   `json:"path,omitempty"`
	Line        int      `json:"line,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
}

type taskRuleJSON struct {
	Pattern string `json:"pattern"`
	Action  string `json:"action"`
}

func agentOf(e cadre.AgentEntry) agentJSON {
	d := e.Agent
	out := agentJSON{
		Name: d.Name, Description: d.Description, Prompt: d.Prompt, Tools: d.Tools, DisallowedTools: d.DisallowedTools,
		Model: d.Model, PermissionMode: string(d.PermissionMode), Background: d.Background, Isolation: string(d.Isolation),
		MaxTurns: d.MaxTurns, Hidden: d.Hidden, Mode: string(d.Mode), Allow: d.Allow, Ask: d.Ask, Deny: d.Deny,
		Format: string(d.Format), URL: d.URL, Source: string(e.Source), Path: e.Path, Line: e.Line, Warnings: e.Warnings,
	}
	if w := d.Workspace; w != nil {
		out.Workspace = &struct {
			Mode string `json:"mode,omitempty"`
			Path string `json:"path,omitempty"`
		}{string(w.Mode), w.Path}
	}
	for _, r := range d.TaskRules {
		out.TaskRules = append(out.TaskRules, taskRuleJSON{r.Pattern, string(r.Action)})
	}
	out.HeaderNames = slices.Sorted(maps.Keys(d.Headers))
	return out
}
