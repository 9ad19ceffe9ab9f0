package app

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/command"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/trust"
)

// Assessment is what a project asks for and whether the user trusts it.
type Assessment struct {
	// Root is the project directory, links resolved: what trust is keyed by.
	Root string
	// Asks are what trusting it would enable, in file order.
	Asks             []trust.Item
	Trusted, Changed bool
	// Home is CADRE_HOME, where the trust store is.
	Home string
}

// AssessWorkspace reads the project's files in cwd ("" for the process's)
// as an untrusted project's are read, collecting what each loader skipped,
// and looks the result up in the trust store under CADRE_HOME. explicit
// trusts it whatever the store says (--trust-workspace).
func AssessWorkspace(dir string, getenv func(string) string, explicit bool) (Assessment, error) {
	cwd := dir
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return Assessment{}, fmt.Errorf("working directory: %w", err)
		}
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return Assessment{}, fmt.Errorf("working directory %q: %w", dir, err)
	}
	// What the project asks for is the same whatever --setting-sources a
	// run reads (the Agent SDK passes none): the digest covers every
	// project file. The user's file is read for what "lower" means; when
	// it is broken (a run may leave it out), the defaults do.
	cfg, err := config.Load(config.LoadOptions{Cwd: cwd, Getenv: getenv})
	if err != nil {
		if cfg, err = config.Load(config.LoadOptions{Cwd: cwd, Getenv: getenv, Sources: []string{config.ScopeProject, config.ScopeLocal}}); err != nil {
			return Assessment{}, err
		}
	}
	asks := cfg.Asks
	agent.Load(agent.LoadOptions{Cwd: cwd, Narrow: func(d *agent.Definition) {
		asks = append(asks, trust.NarrowAgent(d)...)
	}})
	cmds, _ := command.Load(cwd, "")
	cmds.Narrowed(func(c *command.Command) { asks = append(asks, trust.NarrowCommand(c)...) })
	root, err := trust.Root(cwd)
	if err != nil {
		return Assessment{}, err
	}
	state, err := trust.NewStore(cfg.Home).State(root, asks)
	if err != nil {
		return Assessment{}, err
	}
	return Assessment{
		Root: root, Asks: asks, Home: cfg.Home,
		Changed: state == trust.Changed,
		Trusted: state == trust.Trusted || len(asks) == 0 || explicit,
	}, nil
}
