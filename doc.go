// Package cadre is the Go SDK of the cadre agent runtime: open a Runtime on
// a working directory, Run a prompt, and range over the typed events of the
// session as they happen — the same messages `cadre -p --output-format
// stream-json` prints.
//
//	rt, err := cadre.New(ctx, cadre.Options{Cwd: dir, Model: "anthropic:claude-sonnet-4-5"})
//	if err != nil { ... }
//	defer rt.Close()
//	for ev, err := range rt.Run(ctx, cadre.Request{Prompt: "What does main.go do?"}) {
//		if err != nil { ... }
//		if ev.Type == cadre.EventResult { fmt.Println(ev.Result.Result) }
//	}
//
// Settings are read as the CLI reads them (~/.cadre/settings.json, then the
// project's .cadre/settings.json and .cadre/settings.local.json); Options
// override them.
package cadre
