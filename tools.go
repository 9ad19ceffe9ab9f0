package cadre

import (
	"fmt"
	"slices"

	"github.com/cadre-dev/cadre/tool"
)

// withTools is the base pool of every agent: the built-in tools, then
// Options.Tools. An added tool may not take a name (or alias) that a
// built-in or an earlier added tool has: the model could not tell them
// apart, and rules naming the tool would apply to both.
func withTools(builtins, added []tool.Tool) ([]tool.Tool, error) {
	owner := map[string]string{}
	for _, t := range builtins {
		info := t.Info()
		for _, n := range append([]string{info.Name}, info.Aliases...) {
			owner[n] = "the built-in tool " + info.Name
		}
	}
	out := append([]tool.Tool(nil), builtins...)
	for i, t := range added {
		if t == nil {
			return nil, fmt.Errorf("Options.Tools[%d] is nil", i)
		}
		info := t.Info()
		if info.Name == "" {
			return nil, fmt.Errorf("Options.Tools[%d] has no name", i)
		}
		for _, n := range append([]string{info.Name}, info.Aliases...) {
			if o, taken := owner[n]; taken {
				return nil, fmt.Errorf("Options.Tools[%d]: tool %q: the name %q is taken by %s", i, info.Name, n, o)
			}
			owner[n] = fmt.Sprintf("Options.Tools[%d] (%s)", i, info.Name)
		}
		out = append(out, t)
	}
	// Clipped: each run appends its spawn tools to a copy.
	return slices.Clip(out), nil
}
