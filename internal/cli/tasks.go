package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/spf13/cobra"
)

// tasksCmd works on the persisted task records, so it sees the background
// runs of every cadre process sharing the state dir.
func tasksCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	var session string
	var limit int
	list := &cobra.Command{
		Use:   "tasks",
		Short: "list background tasks (newest first); tasks show|output|stop ID; tasks team SESSION",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withRuntime(cmd, "", func(rt *cadre.Runtime) error {
				ts, err := rt.Tasks(cmd.Context(), session, limit)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(stdout, ts)
				}
				if len(ts) == 0 {
					_, err := fmt.Fprintln(stdout, "No tasks.")
					return err
				}
				tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATUS\tAGENT\tDESCRIPTION\tSTARTED\tTOKENS")
				for _, t := range ts {
					agent := t.Agent
					if t.Name != "" {
						agent += " (" + t.Name + ")"
					}
					desc := oneLine(t.Description)
					if t.Progress != "" && !t.Status.Terminal() {
						desc += " — " + oneLine(t.Progress)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", t.ID, t.Status, agent, desc, t.Created.Local().Format(time.DateTime), t.Usage.Total())
				}
				return tw.Flush()
			})
		},
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "print a task's record",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(cmd, "", func(rt *cadre.Runtime) error {
				t, err := rt.Task(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(stdout, t)
				}
				tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
				for _, f := range [][2]string{
					{"id", t.ID}, {"status", string(t.Status)}, {"kind", string(t.Kind)}, {"agent", t.Agent}, {"name", t.Name},
					{"description", t.Description}, {"session", t.ChildSessionID}, {"parent session", t.ParentSessionID},
					{"created", stamp(t.Created)}, {"started", stamp(t.Started)}, {"finished", stamp(t.Finished)},
					{"tokens", fmt.Sprint(t.Usage.Total())}, {"tool uses", fmt.Sprint(t.ToolUses)}, {"cost", t.CostUSD.String()},
					{"progress", t.Progress}, {"output file", t.OutputFile}, {"node", t.Owner}, {"notified", fmt.Sprint(t.Notified)}, {"error", t.Error},
				} {
					if f[1] != "" {
						fmt.Fprintf(tw, "%s\t%s\n", f[0], f[1])
					}
				}
				tw.Flush()
				if t.Result != "" {
					fmt.Fprintf(stdout, "\n%s\n", t.Result)
				}
				return nil
			})
		},
	}
	output := &cobra.Command{
		Use:   "output ID",
		Short: "print a task's output file (its progress so far, or all of it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(cmd, "", func(rt *cadre.Runtime) error {
				out, err := rt.TaskOutput(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				_, err = io.WriteString(stdout, out)
				return err
			})
		},
	}
	stop := &cobra.Command{
		Use:   "stop ID",
		Short: "stop a running task (in whichever cadre process runs it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(cmd, "", func(rt *cadre.Runtime) error {
				msg, err := rt.StopTask(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(stdout, map[string]string{"id": args[0], "message": msg})
				}
				_, err = fmt.Fprintln(stdout, msg)
				return err
			})
		},
	}
	team := &cobra.Command{
		Use:   "team SESSION",
		Short: "list the roster and the shared task list of the team a main session leads",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(cmd, "", func(rt *cadre.Runtime) error {
				team, err := rt.Team(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				ts := team.Tasks
				if asJSON {
					// The task list, as before the roster was printed:
					// scripts read an array.
					if ts == nil {
						ts = []cadre.TeamTask{}
					}
					return writeJSON(stdout, ts)
				}
				tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
				if len(team.Members) > 0 {
					fmt.Fprintln(tw, "TEAMMATE\tTYPE\tSTATE\tWORKING ON")
					for _, m := range team.Members {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Agent, m.State, oneLine(m.Task))
					}
					fmt.Fprintln(tw)
				}
				if len(ts) == 0 {
					tw.Flush()
					_, err := fmt.Fprintln(stdout, "No team tasks.")
					return err
				}
				fmt.Fprintln(tw, "ID\tSTATUS\tOWNER\tSUBJECT\tWAITING ON")
				for _, t := range ts {
					waiting := ""
					for i, id := range t.Waiting {
						if i > 0 {
							waiting += ", "
						}
						waiting += "#" + id
					}
					fmt.Fprintf(tw, "#%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status, t.Owner, oneLine(t.Subject), waiting)
				}
				return tw.Flush()
			})
		},
	}
	for _, c := range []*cobra.Command{list, show, output, stop, team} {
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	}
	list.Flags().StringVar(&session, "session", "", "only the tasks of this main session")
	list.Flags().IntVar(&limit, "limit", 50, "at most this many")
	list.AddCommand(show, output, stop, team)
	return list
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format(time.DateTime)
}
