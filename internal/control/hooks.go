package control

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/cadre-dev/cadre"
)

// hookEvents are the events cadre runs hooks on; the program may register
// callbacks for others Claude Code has, which are reported and left out.
var hookEvents = map[string]cadre.HookEvent{}

func init() {
	for _, e := range []cadre.HookEvent{
		cadre.HookPreToolUse, cadre.HookPostToolUse, cadre.HookUserPromptSubmit, cadre.HookStop,
		cadre.HookSubagentStart, cadre.HookSubagentStop, cadre.HookPreCompact,
		cadre.HookSessionStart, cadre.HookSessionEnd, cadre.HookNotification,
	} {
		hookEvents[string(e)] = e
	}
}

// hooks turns the program's hook registrations into Go hooks that call
// back over the wire (hook_callback) and obey the answer, as a settings
// hook's JSON output is obeyed.
func hooks(reg map[string][]HookMatcher, peer Peer, warn func(string)) map[cadre.HookEvent][]cadre.HookMatcher {
	if len(reg) == 0 {
		return nil
	}
	names := make([]string, 0, len(reg))
	for name := range reg {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[cadre.HookEvent][]cadre.HookMatcher{}
	for _, name := range names {
		ev, ok := hookEvents[name]
		if !ok {
			warn(fmt.Sprintf("initialize: hooks for %s are not run: cadre has no such hook event", name))
			continue
		}
		for _, m := range reg[name] {
			hm := cadre.HookMatcher{Matcher: m.Matcher, Timeout: time.Duration(m.Timeout * float64(time.Second))}
			for _, id := range m.HookCallbackIDs {
				hm.Hooks = append(hm.Hooks, callback(peer, id, m.OnFailure == "block"))
			}
			out[ev] = append(out[ev], hm)
		}
	}
	return out
}

// callback is one program hook function as a Go hook.
func callback(peer Peer, id string, blockOnFailure bool) cadre.HookFunc {
	return func(ctx context.Context, in cadre.HookInput) (cadre.HookOutput, error) {
		raw := in.Raw
		if len(raw) == 0 {
			var err error
			if raw, err = json.Marshal(in); err != nil {
				return cadre.HookOutput{}, fmt.Errorf("hook callback %s: encode input: %w", id, err)
			}
		}
		fail := func(err error) (cadre.HookOutput, error) {
			if blockOnFailure {
				// onFailure "block": a callback that fails blocks, as a
				// command hook that exits 2 does.
				return cadre.HookOutput{Decision: "block", Reason: err.Error()}, nil
			}
			return cadre.HookOutput{}, err
		}
		ans, err := peer.Hook(ctx, id, raw, in.ToolUseID)
		if err != nil {
			return fail(err)
		}
		var out cadre.HookOutput
		if len(ans) > 0 && string(ans) != "null" {
			if err := json.Unmarshal(ans, &out); err != nil {
				return fail(fmt.Errorf("hook callback %s: the answer is not hook output: %w", id, err))
			}
		}
		return out, nil
	}
}
