package cli

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cadre-dev/cadre/internal/suggest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError rewrites pflag's errors for people: an unknown flag gets the
// nearest known one, and a bad value says which flag wanted what, never
// strconv's "parsing "x": invalid syntax".
func flagError(cmd *cobra.Command, err error) error {
	var notExist *pflag.NotExistError
	var invalid *pflag.InvalidValueError
	switch {
	case errors.As(err, &notExist) && notExist.GetSpecifiedName() != "":
		name := notExist.GetSpecifiedName()
		if near, ok := suggest.Closest(name, flagNames(cmd)); ok {
			return fmt.Errorf("unknown flag --%s (did you mean --%s?)", name, near)
		}
		return fmt.Errorf("unknown flag --%s (see %s --help)", name, cmd.CommandPath())
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		return fmt.Errorf("--%s %q: %s", f.Name, invalid.GetValue(), wants(f.Value.Type(), invalid.Unwrap()))
	}
	return err
}

// wants says what a flag of type typ takes, given why a value was refused.
func wants(typ string, cause error) string {
	switch {
	case errors.Is(cause, strconv.ErrRange):
		return "out of range"
	case typ == "bool":
		return "want true or false"
	case strings.HasPrefix(typ, "int"), strings.HasPrefix(typ, "uint"):
		return "want a whole number"
	case strings.HasPrefix(typ, "float"):
		return "want a number"
	case typ == "duration":
		return "want a duration such as 30s, 5m or 1h30m"
	}
	var num *strconv.NumError
	if errors.As(cause, &num) {
		return "want a " + typ
	}
	return cause.Error()
}

// flagNames are the flags cmd takes, its own and inherited, sorted;
// hidden ones (accepted for the Agent SDK, doing nothing) are left out.
func flagNames(cmd *cobra.Command) []string {
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	cmd.LocalFlags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	slices.Sort(names)
	return names
}

// commandNames are the subcommands of cmd, sorted; cobra's help and
// completion are left out, as a one-word prompt ("hello") is more often
// near them than meant for them.
func commandNames(cmd *cobra.Command) []string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.Name() != "help" && c.Name() != "completion" {
			names = append(names, c.Name())
		}
	}
	slices.Sort(names)
	return names
}
