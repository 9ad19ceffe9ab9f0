package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/server"
	"github.com/cadre-dev/cadre/llm"
	"github.com/spf13/cobra"
)

func sessionsCmd(stdout io.Writer) *cobra.Command {
	var asJSON, all bool
	var limit int
	var cwd string
	list := &cobra.Command{
		Use:   "sessions",
		Short: "list sessions (newest first); 'sessions show ID' prints one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withRuntime(cmd, cwd, func(rt *cadre.Runtime) error {
				dir := rt.Cwd()
				if all {
					dir = ""
				}
				infos, err := rt.Sessions(cmd.Context(), dir, limit)
				if err != nil {
					return err
				}
				if asJSON {
					out := make([]server.SessionJSON, 0, len(infos))
					for _, s := range infos {
						out = append(out, server.SessionOf(s))
					}
					return writeJSON(stdout, out)
				}
				if len(infos) == 0 {
					_, err := fmt.Fprintln(stdout, "No sessions yet.")
					return err
				}
				tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tUPDATED\tSTATUS\tTURNS\tAGENT\tTITLE")
				for _, row := range cadre.SessionRows(infos) {
					s := row.Session
					indent := ""
					if row.Depth > 0 {
						indent = strings.Repeat("  ", row.Depth-1) + "└ "
					}
					fmt.Fprintf(tw, "%s%s\t%s\t%s\t%d\t%s\t%s\n", indent, s.ID, s.Updated.Local().Format(time.DateTime), s.Status, s.NumTurns, s.Agent, s.Title)
				}
				return tw.Flush()
			})
		},
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "print a session's record and transcript",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(cmd, cwd, func(rt *cadre.Runtime) error {
				info, entries, err := rt.Session(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if asJSON {
					if entries == nil {
						entries = []cadre.TranscriptEntry{}
					}
					return writeJSON(stdout, map[string]any{"session": server.SessionOf(info), "transcript": entries})
				}
				fmt.Fprintf(stdout, "session   %s\nagent     %s\nstatus    %s\ncwd       %s\ncreated   %s\nupdated   %s\nturns     %d\ntokens    %d in, %d out, %d cache read, %d cache write\ncost      %s\ntranscript %s\n",
					info.ID, info.Agent, info.Status, info.Cwd, info.Created.Local().Format(time.DateTime), info.Updated.Local().Format(time.DateTime),
					info.NumTurns, info.Usage.InputTokens, info.Usage.OutputTokens, info.Usage.CacheReadInputTokens, info.Usage.CacheCreationInputTokens, info.CostUSD, info.TranscriptPath)
				if info.ParentID != "" {
					fmt.Fprintf(stdout, "parent    %s\n", info.ParentID)
				}
				for _, e := range entries {
					if e.Message == nil {
						continue
					}
					fmt.Fprintf(stdout, "\n[%s]\n%s", e.Type, render(*e.Message))
				}
				return nil
			})
		},
	}
	for _, c := range []*cobra.Command{list, show} {
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
		c.Flags().StringVar(&cwd, "cwd", "", "working directory (default: the current one)")
	}
	list.Flags().BoolVar(&all, "all", false, "list sessions of every directory")
	list.Flags().IntVar(&limit, "limit", 50, "at most this many")
	list.AddCommand(show)
	return list
}

func render(m llm.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		switch c.Type {
		case llm.BlockText:
			b.WriteString(c.Text + "\n")
		case llm.BlockThinking:
			b.WriteString("(thinking) " + c.Thinking + "\n")
		case llm.BlockToolUse:
			fmt.Fprintf(&b, "→ %s %s\n", c.Name, c.Input)
		case llm.BlockToolResult:
			mark := "←"
			if c.IsError {
				mark = "← error:"
			}
			text := c.ResultText()
			if len(text) > 400 {
				text = text[:400] + "…"
			}
			fmt.Fprintf(&b, "%s %s\n", mark, strings.TrimRight(text, "\n"))
		}
	}
	return b.String()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
