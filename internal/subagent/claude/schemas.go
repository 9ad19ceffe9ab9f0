package claude

import (
	"embed"
	"encoding/json"
)

// schemas are the input schemas of the tools every main agent is offered
// (the spawn tools, SendMessage and the task tools), encoded once when the
// code changes (TestSchemasAreTheInputTypes writes them with -update)
// rather than inferred by reflection in every process that offers the
// tools: the Agent tool's was ~2% of a one-turn run's CPU, and inferring
// the four small ones allocated ~200 KB of a one-turn run's heap.
//
//go:embed schemas/*.json
var schemas embed.FS

// schema returns the embedded input schema in schemas/<name>.json.
func schema(name string) json.RawMessage {
	b, err := schemas.ReadFile("schemas/" + name + ".json")
	if err != nil {
		panic("claude: no embedded schema " + name) // caught by the tests
	}
	return b
}
