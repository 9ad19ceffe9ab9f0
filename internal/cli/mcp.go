package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cadre-dev/cadre"
	"github.com/spf13/cobra"
)

func mcpCmd(stdout io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "mcp", Short: "MCP servers: 'mcp list' starts them and shows each one's status"}
	var asJSON, strict bool
	var cwd string
	var configs []string
	list := &cobra.Command{
		Use:   "list",
		Short: "start the configured MCP servers and show each one's status (connected, or why not) and tool count",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			debug, _ := cmd.Flags().GetBool("debug")
			rt, err := cadre.New(cmd.Context(), cadre.Options{
				Cwd: cwd, MCPConfig: configs, StrictMCPConfig: strict,
				Logger: newLogger(cmd.ErrOrStderr(), debug),
			})
			if err != nil {
				return err
			}
			defer rt.Close()
			servers := rt.MCPServers(cmd.Context())
			if asJSON {
				type row struct {
					Name      string `json:"name"`
					Status    string `json:"status"`
					Transport string `json:"transport"`
					Source    string `json:"source"`
					Tools     int    `json:"tools"`
					Resources bool   `json:"resources"`
					Prompts   bool   `json:"prompts"`
					Error     string `json:"error,omitempty"`
				}
				rows := []row{}
				for _, s := range servers {
					rows = append(rows, row{s.Name, s.Status, s.Transport, s.Source, s.Tools, s.Resources, s.Prompts, s.Error})
				}
				return writeJSON(stdout, rows)
			}
			if len(servers) == 0 {
				fmt.Fprintln(stdout, "No MCP servers configured (see docs/mcp.md).")
				return nil
			}
			tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATUS\tTRANSPORT\tTOOLS\tSOURCE")
			for _, s := range servers {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.Name, s.Status, orDefault(s.Transport, "-"), s.Tools, s.Source)
				if s.Error != "" {
					fmt.Fprintf(tw, "\t\t\t\t%s\n", oneLine(s.Error))
				}
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.Flags().StringVar(&cwd, "cwd", "", "project directory (default: the current one)")
	list.Flags().StringArrayVar(&configs, "mcp-config", nil, "more MCP servers: a JSON file or string of {\"mcpServers\": …}")
	list.Flags().BoolVar(&strict, "strict-mcp-config", false, "use only the servers of --mcp-config")
	root.AddCommand(list)
	return root
}
