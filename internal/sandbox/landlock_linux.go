package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The launcher applies Landlock itself, with golang.org/x/sys/unix, to
// the one thread that executes the command next: a ruleset restricts the
// thread that asks, and execve carries the thread's domain into the new
// program, so no other thread needs it. (Restricting every thread, as a
// library for long-lived processes must, takes a signal round to each of
// them and, through libpsx, cgo, which would make the small launcher a
// dynamically linked program that starts a millisecond slower.)

// maxABI is the newest Landlock ABI whose rights this file knows.
const maxABI = 7

// landlockABI returns the kernel's Landlock ABI version.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		if errno == unix.ENOSYS || errno == unix.EOPNOTSUPP {
			return 0, errors.New("landlock is not supported by the kernel or not enabled at boot")
		}
		return 0, errno
	}
	return int(v), nil
}

// Access rights, by what they grant.
const (
	readAccess = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// writeAccess is what a writable tree grants: everything but making
	// device nodes (which would reach disks past every wall) and device
	// ioctls.
	writeAccess = readAccess | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_SYM |
		unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// deviceAccess is what the shared devices grant: reading, writing
	// and their ioctls (a terminal's).
	deviceAccess = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	// fileAccess are the rights a rule on a file (not a directory) may
	// carry; the kernel refuses the others there.
	fileAccess = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS are the filesystem rights an ABI version knows: a ruleset
// handling them denies each one not granted by a rule.
func handledFS(abi int) uint64 {
	h := uint64(unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1) // ABI 1: execute … make_sym
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// devices are the device files every command may write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// restrict applies p's Landlock ruleset to the calling thread, which
// must be locked to its goroutine and execute the command next: read and
// execute everywhere, write only in p.Writable and the shared devices,
// with network deny no TCP, and (ABI 6+) no signals or abstract UNIX
// sockets reaching outside the sandbox. What the kernel's ABI lacks is
// left unenforced, as Status reports.
func restrict(p Policy) error {
	abi, err := landlockABI()
	if err != nil {
		return err
	}
	abi = min(abi, maxABI)
	// The attribute's size tells the kernel which of its fields are set.
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS(abi)}
	size := unsafe.Offsetof(attr.Handled_access_net)
	if abi >= 4 {
		if p.Network == NetworkDeny {
			attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		}
		size = unsafe.Offsetof(attr.Scoped)
	}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Offsetof(attr.Quiet_access_fs)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("create the ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	type rule struct {
		paths  []string
		access uint64
	}
	for _, r := range []rule{
		{[]string{"/"}, readAccess},
		{p.Writable, writeAccess},
		{devices, deviceAccess},
		{[]string{"/dev/pts", "/dev/shm"}, writeAccess | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV},
	} {
		for _, path := range r.paths {
			if err := allow(int(fd), path, r.access&attr.Handled_access_fs); err != nil {
				return err
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("enforce the ruleset: %w", errno)
	}
	return nil
}

// allow adds a rule granting access beneath path (on path alone, for a
// file) to the ruleset fd; a path that does not exist is skipped.
func allow(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileAccess
	}
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("allow %s: %w", path, errno)
	}
	return nil
}
