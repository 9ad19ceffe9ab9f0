package shellcmd

import (
	"slices"
	"strings"
)

// wrapperSpec describes the options of a command that runs another
// command given as its remaining words (nice -n 5 make). Deny and ask
// rules look through it at the command it runs.
type wrapperSpec struct {
	flags    string // short options with no argument
	args     string // short options with an argument, attached or the next word
	optional string // short options whose argument, if any, is attached (xargs -i{})
	numeric  bool   // -N is an option (nice -10)

	longFlags    []string
	longArgs     []string // take =value or the next word
	longOptional []string // take only =value

	assigns  bool // NAME=value words may follow the options
	operands int  // words between the options and the command (timeout's duration)

	noRun     string   // short options after which nothing is run (command -v)
	noRunLong []string //
	cwd       string   // short options that change directory (env -C)
	cwdLong   []string //
	write     string   // short option whose argument is a file written (time -o)
	writeLong []string //
	split     string   // short option whose argument is split into a command (env -S)
	splitLong []string //
	replace   string   // short options naming a replacement string (xargs -I)
	replLong  []string //
}

// wrapperFor returns the options of a command deny rules look through,
// or nil. Options are GNU coreutils', util-linux's, sudo's and doas'.
func wrapperFor(name string) *wrapperSpec {
	switch name {
	case "command":
		return &wrapperSpec{flags: "pvV", noRun: "vV"}
	case "builtin":
		return &wrapperSpec{}
	case "exec":
		return &wrapperSpec{flags: "cl", args: "a"}
	case "nice":
		return &wrapperSpec{args: "n", numeric: true,
			longArgs: []string{"--adjustment"}}
	case "nohup", "busybox", "toybox":
		return &wrapperSpec{}
	case "timeout":
		return &wrapperSpec{flags: "fpv", args: "ks", operands: 1,
			longFlags: []string{"--foreground", "--preserve-status", "--verbose"},
			longArgs:  []string{"--kill-after", "--signal"}}
	case "xargs":
		return &wrapperSpec{flags: "0oprtx", args: "adEILnPs", optional: "eil",
			longFlags:    []string{"--null", "--open-tty", "--interactive", "--no-run-if-empty", "--verbose", "--exit", "--show-limits"},
			longArgs:     []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"},
			longOptional: []string{"--eof", "--replace", "--max-lines"},
			replace:      "Ii", replLong: []string{"--replace"}}
	case "time":
		return &wrapperSpec{flags: "pvqa", args: "fo",
			longFlags: []string{"--portability", "--verbose", "--quiet", "--append"},
			longArgs:  []string{"--format", "--output"},
			write:     "o", writeLong: []string{"--output"}}
	case "stdbuf":
		return &wrapperSpec{args: "ioe",
			longArgs: []string{"--input", "--output", "--error"}}
	case "setsid":
		return &wrapperSpec{flags: "cfw",
			longFlags: []string{"--ctty", "--fork", "--wait"}}
	case "sudo":
		return &wrapperSpec{flags: "AbBEeHiKklNnPSsVv", optional: "h", args: "CDgpRrtTUu", assigns: true,
			longFlags: []string{"--askpass", "--bell", "--background", "--edit", "--set-home", "--login",
				"--remove-timestamp", "--reset-timestamp", "--list", "--non-interactive", "--preserve-groups", "--stdin",
				"--shell", "--validate"},
			longArgs: []string{"--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type",
				"--command-timeout", "--other-user", "--user"},
			longOptional: []string{"--preserve-env"},
			noRun:        "ehKlVv", noRunLong: []string{"--edit", "--list", "--remove-timestamp", "--validate"},
			cwd: "DR", cwdLong: []string{"--chdir", "--chroot"}}
	case "doas":
		return &wrapperSpec{flags: "nsL", args: "uC", noRun: "LC"}
	case "env":
		return &wrapperSpec{flags: "i0v", args: "uCS", assigns: true,
			longFlags:    []string{"--ignore-environment", "--null", "--debug", "--list-signal-handling"},
			longArgs:     []string{"--unset", "--chdir", "--split-string"},
			longOptional: []string{"--block-signal", "--default-signal", "--ignore-signal"},
			cwd:          "C", cwdLong: []string{"--chdir"},
			split: "S", splitLong: []string{"--split-string"}}
	}
	return nil
}

// wrapperParse is what a wrapper's options say.
type wrapperParse struct {
	noRun    bool // the wrapper runs nothing (command -v, sudo -l)
	cwdMoves bool
	// unsure is the index of the first option this reader does not know,
	// or -1: from there on the command may start at any word.
	unsure int
	writes []optionWrite
	split  *Word // env -S's string
	// replace is xargs' replacement string (-I{}), or "".
	replace string
}

type optionWrite struct {
	opt  string
	word Word
}

// parse skips the wrapper's options, assignments and operands, and
// returns the words of the command it runs.
func (s *wrapperSpec) parse(args []Word) ([]Word, wrapperParse) {
	p := wrapperParse{unsure: -1}
	unknown := func(i int) {
		if p.unsure < 0 {
			p.unsure = i
		}
	}
	// arg reports an option's argument: attached text, else the next word.
	i := 0
	take := func(attached string, hasAttached bool, from Word) (Word, bool) {
		if hasAttached {
			return Word{Raw: attached, Value: attached, Static: true, Glob: from.Glob}, true
		}
		if i+1 < len(args) {
			i++
			return args[i], true
		}
		return Word{}, false
	}
	// use records what an option with its argument means.
	use := func(opt string, short bool, val Word) {
		in := func(set string, long []string) bool {
			if short {
				return strings.Contains(set, opt)
			}
			return slices.Contains(long, opt)
		}
		switch {
		case in(s.cwd, s.cwdLong):
			p.cwdMoves = true
		case in(s.write, s.writeLong):
			p.writes = append(p.writes, optionWrite{opt: dash(opt, short), word: val})
		case in(s.split, s.splitLong):
			v := val
			p.split = &v
		case in(s.replace, s.replLong):
			p.replace = "{}"
			if val.Static && val.Value != "" {
				p.replace = val.Value
			}
		}
		if in(s.noRun, s.noRunLong) {
			p.noRun = true
		}
	}

options:
	for ; i < len(args); i++ {
		x := args[i]
		if !x.Static {
			unknown(i)
			break
		}
		v := x.Value
		switch {
		case v == "--":
			i++
			break options
		case v == "--help" || v == "--version":
			p.noRun = true
			return nil, p
		case strings.HasPrefix(v, "--"):
			name, val, hasVal := strings.Cut(v, "=")
			switch {
			case slices.Contains(s.longArgs, name):
				w, ok := take(val, hasVal, x)
				if !ok {
					return nil, p
				}
				use(name, false, w)
			case slices.Contains(s.longOptional, name):
				w := Word{Raw: val, Value: val, Static: true}
				if !hasVal {
					w.Value = ""
				}
				use(name, false, w)
			case slices.Contains(s.longFlags, name):
				use(name, false, Word{})
			default:
				unknown(i)
			}
		case len(v) > 1 && v[0] == '-':
			if s.numeric && strings.Trim(v[1:], "0123456789") == "" {
				continue
			}
			for j := 1; j < len(v); j++ {
				c := string(v[j])
				switch {
				case strings.Contains(s.args, c):
					w, ok := take(v[j+1:], j+1 < len(v), x)
					if !ok {
						return nil, p
					}
					use(c, true, w)
					continue options
				case strings.Contains(s.optional, c):
					use(c, true, Word{Raw: v[j+1:], Value: v[j+1:], Static: true})
					continue options
				case strings.Contains(s.flags, c):
					use(c, true, Word{})
				default:
					unknown(i)
					continue options
				}
			}
		case v == "-" && s.assigns:
			// env - is env -i.
		default:
			break options
		}
	}
	for s.assigns && i < len(args) && args[i].Static && isAssignment(args[i].Value) {
		i++
	}
	i += s.operands
	if i >= len(args) {
		return nil, p
	}
	return args[i:], p
}

func dash(opt string, short bool) string {
	if short {
		return "-" + opt
	}
	return opt
}
