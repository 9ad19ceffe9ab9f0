package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/spf13/cobra"
)

// trustCmd is `cadre trust`: it shows what the project asks for that an
// untrusted project is refused, and records the user's trust on
// confirmation (docs/security.md#workspace-trust).
func trustCmd(stdin io.Reader, stdout io.Writer) *cobra.Command {
	var cwd string
	var yes, revoke bool
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "review what this project's files ask for, and trust it (docs/security.md)",
		Long: `cadre trust lists what the project's own files ask for that would widen what
cadre does there — each allow rule, hook command, MCP server command line,
provider override, agent or skill grant — and, when you confirm, records that
you trust the project asking for exactly that (in $CADRE_HOME/trust.json, never
in the project). When the project later asks for something else, it is
untrusted again until you run cadre trust once more. --yes records without
asking (for scripts); --revoke forgets the trust.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := cadre.Options{Cwd: cwd}
			if revoke {
				ok, err := cadre.RevokeWorkspaceTrust(opts)
				if err != nil {
					return err
				}
				if ok {
					fmt.Fprintln(stdout, "trust revoked: this project's files may only narrow what cadre does")
				} else {
					fmt.Fprintln(stdout, "this project was not trusted")
				}
				return nil
			}
			w, err := cadre.AssessWorkspace(opts)
			if err != nil {
				return err
			}
			showTrust(stdout, w)
			if len(w.Asks) == 0 {
				return nil
			}
			if w.Trusted {
				fmt.Fprintln(stdout, "You trust this project asking for exactly this.")
				return nil
			}
			if !yes {
				ok, err := confirm(stdin, stdout, "Trust this project and enable all of the above? [y/N] ")
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintln(stdout, "not trusted: nothing recorded")
					return nil
				}
			}
			if err := cadre.TrustWorkspace(opts, w); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "trusted %s\n", w.Root)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cwd, "cwd", "", "the project (default: the current directory)")
	fl.BoolVarP(&yes, "yes", "y", false, "trust without asking (for scripts)")
	fl.BoolVar(&revoke, "revoke", false, "forget your trust in the project")
	return cmd
}

// showTrust prints what trusting w would enable, one item a line, grouped
// by file.
func showTrust(out io.Writer, w cadre.WorkspaceTrust) {
	if len(w.Asks) == 0 {
		fmt.Fprintf(out, "%s: the project's files ask for nothing beyond what they may without trust.\n", w.Root)
		return
	}
	switch {
	case w.Changed:
		fmt.Fprintf(out, "%s changed what it asks for since you trusted it. Trusting it enables:\n", w.Root)
	case w.Trusted:
		fmt.Fprintf(out, "%s is trusted. Its files enable:\n", w.Root)
	default:
		fmt.Fprintf(out, "%s is not trusted. Trusting it enables:\n", w.Root)
	}
	last := ""
	for _, a := range w.Asks {
		if a.Source != last {
			fmt.Fprintf(out, "  %s\n", a.Source)
			last = a.Source
		}
		v := a.Value
		if v != "" {
			v = ": " + strings.ReplaceAll(v, "\n", `\n`)
		}
		fmt.Fprintf(out, "    %s%s\n", a.Key, v)
	}
}

// confirm asks a yes/no question on a line of in; anything but y or yes
// is no.
func confirm(in io.Reader, out io.Writer, question string) (bool, error) {
	fmt.Fprint(out, question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read the answer: %w", err)
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}
