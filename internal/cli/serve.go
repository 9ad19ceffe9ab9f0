package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/a2a"
	"github.com/cadre-dev/cadre/internal/server"
	"github.com/spf13/cobra"
)

// shutdownGrace bounds how long a stopping server waits for its runs to
// record their end and for its connections to close.
const shutdownGrace = 30 * time.Second

type serveFlags struct {
	addr, token                      string
	model, permissionMode, cwd       string
	systemPrompt, appendSystemPrompt string
	settings, settingSources         string
	agents, fallbackModel            string
	allowed, denied, addDir, mcp     []string
	strictMCP, trustWorkspace        bool
	maxTurns                         int
	maxBudgetUSD                     float64
}

// serveCmd is `cadre serve`: the HTTP API, its event streams and the web
// view over one runtime (docs/server.md).
func serveCmd(stdout, stderr io.Writer) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "serve the HTTP API, live event streams and the web view (docs/server.md)",
		Long: `cadre serve runs one HTTP server over the runtime the CLI uses: a JSON API to
start runs, stream their events (Server-Sent Events, the stream-json lines),
message running agents, answer approvals, list sessions and tasks; and the web
view at /. It listens on 127.0.0.1:8420 by default; any other address needs a
token (--token or CADRE_SERVE_TOKEN), then required as a bearer token on every
endpoint but the A2A agent card. SIGINT or SIGTERM stops every run as /stop
does, records it, and exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8420", "address to listen on, host:port (a non-loopback host needs --token)")
	fl.StringVar(&f.token, "token", "", "bearer token every request must carry (default: $CADRE_SERVE_TOKEN)")
	fl.StringVar(&f.model, "model", "", "default model of the runs: provider:model, an alias or a bare id")
	fl.StringVar(&f.permissionMode, "permission-mode", "", "default permission mode of the runs: plan, dontAsk, default, acceptEdits, auto or bypassPermissions")
	fl.StringVar(&f.cwd, "cwd", "", "working directory of the runs (default: the current one)")
	fl.StringVar(&f.systemPrompt, "system-prompt", "", "replace the default system prompt")
	fl.StringVar(&f.appendSystemPrompt, "append-system-prompt", "", "append to the system prompt")
	fl.StringArrayVar(&f.allowed, "allowedTools", nil, `allow rules, e.g. "Bash(git diff:*) Edit"`)
	fl.StringArrayVar(&f.denied, "disallowedTools", nil, `deny rules; a bare tool name removes the tool`)
	fl.StringVar(&f.settingSources, "setting-sources", "", "settings files to read: a comma-separated list of user, project, local (default: all)")
	fl.StringVar(&f.settings, "settings", "", "one more settings layer: a settings file's path, or settings as JSON")
	fl.StringArrayVar(&f.addDir, "add-dir", nil, "another directory the agents may work in")
	fl.StringVar(&f.agents, "agents", "", `subagents as JSON: {"name": {"description": …, "prompt": …}}`)
	fl.StringArrayVar(&f.mcp, "mcp-config", nil, "more MCP servers: a file or JSON text of {\"mcpServers\": …}")
	fl.BoolVar(&f.strictMCP, "strict-mcp-config", false, "use only the MCP servers of --mcp-config")
	fl.BoolVar(&f.trustWorkspace, "trust-workspace", false, "trust the project's files without asking (automation; see cadre trust)")
	fl.StringVar(&f.fallbackModel, "fallback-model", "", "model a turn switches to when the main one is overloaded")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "stop a turn after this many model turns (0: no limit)")
	fl.Float64Var(&f.maxBudgetUSD, "max-budget-usd", 0, "stop a run when it has cost this much (USD)")
	return cmd
}

func runServe(cmd *cobra.Command, f serveFlags, stdout, stderr io.Writer) error {
	ctx := cmd.Context()
	if f.token == "" {
		f.token = os.Getenv("CADRE_SERVE_TOKEN")
	}
	loopback, err := server.CheckAddr(f.addr, f.token)
	if err != nil {
		return err
	}
	printToken := f.token == ""
	if printToken {
		// Loopback is no boundary against a web page in the user's own
		// browser: a token is required always (issue 22).
		f.token = server.NewToken()
	}
	allowed, err := rules(f.allowed)
	if err != nil {
		return fmt.Errorf("--allowedTools: %w", err)
	}
	denied, err := rules(f.denied)
	if err != nil {
		return fmt.Errorf("--disallowedTools: %w", err)
	}
	if f.maxTurns < 0 {
		return fmt.Errorf("--max-turns must be positive, got %d", f.maxTurns)
	}
	debug, _ := cmd.Flags().GetBool("debug")
	log := newLogger(stderr, debug)
	tp, flush := openTracing(ctx, log)
	defer flush() // after the runtime's Close
	rt, err := cadre.New(ctx, cadre.Options{
		Cwd: f.cwd, Model: f.model, PermissionMode: cadre.PermissionMode(f.permissionMode), MaxTurns: f.maxTurns,
		AllowedTools: allowed, DisallowedTools: denied, SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendSystemPrompt,
		SettingSources: settingSources(cmd.Flags(), f.settingSources), Settings: f.settings, AdditionalDirectories: f.addDir,
		AgentsJSON: []byte(f.agents), MCPConfig: f.mcp, StrictMCPConfig: f.strictMCP,
		FallbackModel: f.fallbackModel, MaxBudgetUSD: f.maxBudgetUSD, Logger: log, TracerProvider: tp,
		TrustWorkspace: f.trustWorkspace,
		// Nodes behind one load balancer share their lanes (store.dispatch).
		Dispatch: cadre.DispatchAny,
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	for _, w := range rt.Warnings() {
		log.Warn(w)
	}
	agents, err := a2a.New(a2a.Config{Runtime: rt, Model: f.model, PermissionMode: cadre.PermissionMode(f.permissionMode), Bearer: true})
	if err != nil {
		return err
	}
	defer agents.Close()
	srv, err := server.New(server.Config{
		Runtime: rt, Token: f.token, Model: f.model, PermissionMode: cadre.PermissionMode(f.permissionMode), Logger: log,
		A2A: agents.Endpoints(), AgentCard: agents.CardHandler(),
	})
	if err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.addr, err)
	}
	if loopback {
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		srv.SetHosts(append([]string{host}, server.LoopbackHosts...))
	}
	// No ReadTimeout or WriteTimeout: event streams stay open as long as
	// their runs; the server bounds each request body's arrival itself.
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	url := "http://" + ln.Addr().String() + "/"
	if printToken {
		fmt.Fprintf(stdout, "cadre serve: listening on %s — open %s?token=%s (API clients: \"Authorization: Bearer %s\"; only /.well-known/agent-card.json is public)\n", url, url, f.token, f.token)
	} else {
		fmt.Fprintf(stdout, "cadre serve: listening on %s — every request needs \"Authorization: Bearer <token>\" (the web view: %s?token=<token>), except /.well-known/agent-card.json\n", url, url)
	}
	if !loopback {
		fmt.Fprintf(stdout, "cadre serve: %s is reachable beyond this machine: anyone with the token can run tools here\n", f.addr)
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve %s: %w", f.addr, err)
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "cadre serve: stopping: every run is stopped and recorded")
	// Runs first: that ends their event streams, so the HTTP server's
	// Shutdown does not wait on them.
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	errRuns := srv.Shutdown(sctx)
	// The A2A tasks' conversations too: that ends their SSE streams.
	agents.Close()
	errHTTP := hs.Shutdown(sctx)
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		errHTTP = errors.Join(errHTTP, err)
	}
	if err := errors.Join(errRuns, errHTTP); err != nil {
		return fmt.Errorf("stop the server: %w", err)
	}
	fmt.Fprintln(stdout, "cadre serve: stopped")
	return nil
}
