package hook

import (
	"context"
	"fmt"

	"github.com/cadre-dev/cadre/hook"
)

// FromFuncs is the configuration of hooks written in Go (the SDK's
// Options.Hooks): each function becomes a handler that gets the event's
// input in the SDK's shape and whose Output is a command hook's. An
// unknown event or a nil function is an error naming it.
func FromFuncs(funcs map[Event][]hook.Matcher) (Config, error) {
	c := Config{}
	for ev, ms := range funcs {
		if !Known(ev) {
			return nil, fmt.Errorf("Options.Hooks: unknown event %q", ev)
		}
		for i, m := range ms {
			hm := Matcher{Matcher: m.Matcher, Timeout: m.Timeout}
			for j, f := range m.Hooks {
				if f == nil {
					return nil, fmt.Errorf("Options.Hooks[%s][%d].Hooks[%d] is nil", ev, i, j)
				}
				hm.Handlers = append(hm.Handlers, Handler{Name: "callback", Run: func(ctx context.Context, c Call) (Output, error) {
					return f(ctx, c.public())
				}})
			}
			c[ev] = append(c[ev], hm)
		}
	}
	return c, nil
}

// public is the call's input as a Go hook gets it: the input, and Raw
// the JSON a command hook would read.
func (c Call) public() hook.Input {
	in := c.Input
	in.Raw = c.Raw
	return in
}
