package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// LauncherArg is argv[1] of the launcher: a binary started with it sets up
// the walls and executes the command instead of running its main.
const LauncherArg = "__cadre-sandbox-exec"

// launchExit is the launcher's exit status when it cannot set the walls
// up (the command never ran), as a shell's for a command it cannot run.
const launchExit = 126

// LaunchPrefix starts the launcher's own diagnostics.
const LaunchPrefix = "cadre sandbox: "

func init() {
	// The launcher path runs before main and before the packages that sort
	// after this one initialise: starting a sandboxed command costs little
	// more than starting the binary.
	if len(os.Args) > 2 && os.Args[1] == LauncherArg {
		os.Exit(launch(os.Args[2:]))
	}
}

// specVersion is the version of spec this launcher reads: a launcher
// installed from another release refuses a spec it may misread, rather
// than run the command inside walls cadre did not ask for.
const specVersion = 1

// spec is what Wrap hands the launcher.
type spec struct {
	// V is specVersion.
	V int `json:"v"`
	Policy
	// Mounts: the launcher runs in its own mount namespace and makes the
	// ReadOnly and ReadDeny mounts.
	Mounts bool `json:"mounts,omitempty"`
	// Path is the program to execute.
	Path string `json:"path"`
}

// Probe reports what this kernel supports; launcher is the binary Wrap
// would start ("" means none is known).
func Probe(launcher string) Status {
	s := Status{OS: runtime.GOOS, Launcher: launcher}
	abi, err := landlockABI()
	if err != nil {
		s.Reason = "this kernel has no Landlock (" + err.Error() + "); enable it with the lsm= boot parameter"
	} else {
		s.LandlockABI = abi
	}
	s.Filesystem = abi >= 1
	s.TCP = abi >= 4
	s.Scopes = abi >= 6
	s.MountNamespace, err = mountNamespaces()
	if err != nil && s.Reason == "" {
		s.Reason = err.Error()
	}
	if launcher == "" && s.Reason == "" {
		s.Reason = "this program has no sandbox launcher"
	}
	return s
}

// mountNamespaces reports whether Wrap can give a command its own mount
// namespace: root can; anyone else needs unprivileged user namespaces.
func mountNamespaces() (bool, error) {
	if os.Geteuid() == 0 {
		return true, nil
	}
	for _, c := range []struct {
		file string
		off  func(v int) bool
	}{
		{"/proc/sys/kernel/unprivileged_userns_clone", func(v int) bool { return v == 0 }},
		{"/proc/sys/user/max_user_namespaces", func(v int) bool { return v == 0 }},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", func(v int) bool { return v == 1 }},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			continue
		}
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && c.off(v) {
			return false, fmt.Errorf("unprivileged user namespaces are off (%s), so protected paths inside the workspace cannot be made read-only", c.file)
		}
	}
	return true, nil
}

// Wrap rewrites cmd, not yet started, to run inside p: cmd starts the
// launcher binary, which makes the walls and then executes what cmd named,
// with the same arguments, environment, directory and process attributes.
func Wrap(cmd *exec.Cmd, p Policy, launcher string) error {
	if cmd.Err != nil {
		return cmd.Err
	}
	if launcher == "" {
		return fmt.Errorf("%w: no launcher binary", ErrUnavailable)
	}
	// Checked here, where the error reaches the caller as exec's own
	// would: once wrapped, a missing program is the launcher's failure.
	if _, err := exec.LookPath(cmd.Path); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	sp := spec{V: specVersion, Policy: p, Path: cmd.Path, Mounts: len(p.ReadOnly)+len(p.ReadDeny) > 0}
	enc, err := json.Marshal(sp)
	if err != nil {
		return fmt.Errorf("sandbox: encode the policy: %w", err)
	}
	cmd.Args = append([]string{launcher, LauncherArg, string(enc), "--"}, cmd.Args...)
	cmd.Path = launcher
	if !sp.Mounts {
		return nil
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= syscall.CLONE_NEWNS
	if uid := os.Geteuid(); uid != 0 {
		// The launcher is root only inside its user namespace, mapped to
		// the user's own ids; the command it executes keeps those ids and
		// loses the namespace's capabilities at execve.
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		gid := os.Getegid()
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return nil
}

// launch is the launcher: args are the encoded spec, "--", then the
// command's argv. It returns only on failure.
func launch(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, LaunchPrefix+format+"\n", a...)
		return launchExit
	}
	if len(args) < 3 || args[1] != "--" {
		return fail("usage: %s POLICY -- ARGV…", LauncherArg)
	}
	var sp spec
	if err := json.Unmarshal([]byte(args[0]), &sp); err != nil {
		return fail("bad policy: %v", err)
	}
	if sp.V != specVersion {
		return fail("this launcher (%s) reads policy version %d, and was handed version %d: install cadre and %s from the same release", os.Args[0], specVersion, sp.V, LauncherName)
	}
	if err := sp.Validate(); err != nil {
		return fail("%v", err)
	}
	// Namespaces, mounts and Landlock belong to this thread, which must
	// be the one that executes the command.
	runtime.LockOSThread()
	if sp.Mounts {
		if err := mountWalls(sp.Policy); err != nil {
			return fail("%v", err)
		}
		// The working directory was entered before the mounts: entered
		// again by name, it resolves through them, so that a relative
		// path cannot reach past a mount made on the directory itself.
		wd, err := os.Getwd()
		if err != nil {
			return fail("working directory: %v", err)
		}
		if err := os.Chdir(wd); err != nil {
			return fail("working directory: %v", err)
		}
	}
	if err := restrict(sp.Policy); err != nil {
		return fail("landlock: %v", err)
	}
	err := syscall.Exec(sp.Path, args[2:], os.Environ())
	return fail("run %s: %v", sp.Path, err)
}

// mountWalls makes the ReadOnly paths read-only mounts (a Writable one
// inside them writable again) and hides the ReadDeny ones, in this
// process's own mount namespace.
func mountWalls(p Policy) error {
	// Nothing made here may reach the namespace the runtime runs in.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	type op struct {
		path     string
		readOnly bool
	}
	var ops []op
	for _, d := range p.ReadOnly {
		ops = append(ops, op{d, true})
	}
	for _, d := range p.Writable {
		if under(p.ReadOnly, d) != "" {
			ops = append(ops, op{d, false})
		}
	}
	// Outer first, so that an inner one lands on top.
	slices.SortStableFunc(ops, func(a, b op) int { return len(a.path) - len(b.path) })
	for _, o := range ops {
		if _, err := os.Lstat(o.path); err != nil {
			continue
		}
		if err := rebind(o.path, o.path, o.readOnly); err != nil {
			return err
		}
	}
	for _, d := range p.ReadDeny {
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0500")
		} else {
			err = rebind("/dev/null", d, true)
		}
		if err != nil {
			return fmt.Errorf("hide %s: %w", d, err)
		}
	}
	return nil
}

// rebind bind-mounts src on dst and sets it read-only or writable,
// keeping the flags the kernel will not let a namespace drop.
func rebind(src, dst string, readOnly bool) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", dst, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dst, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", dst, err)
	}
	keep := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
	flags := unix.MS_BIND | unix.MS_REMOUNT | keep
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	if err := unix.Mount("", dst, "", flags, ""); err != nil {
		return fmt.Errorf("remount %s: %w", dst, err)
	}
	return nil
}
