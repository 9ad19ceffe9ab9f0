package sandbox

import (
	"os"
	"slices"
	"strings"
)

// WithoutVars returns env (os.Environ() when nil) without the variables
// named in hide: the provider keys, which no command cadre starts for a
// model may read, whatever the model asks it to print.
func WithoutVars(env, hide []string) []string {
	if env == nil {
		env = os.Environ()
	}
	if len(hide) == 0 {
		return env
	}
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(hide, name)
	})
}
