package pgtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc's times: USER_HZ, 100 on every Linux
// architecture as the kernel exports it.
const userHZ = 100

// CPU is the processor time the server's processes have used so far: its
// postmaster, the backends and workers running, and those that ended
// (counted in the postmaster's children's times). A benchmark reads it
// before and after a run to tell the server's share of the machine from
// its client's, which wall time on a shared machine does not.
func (s *Server) CPU() (time.Duration, error) {
	s.mu.Lock()
	dir := s.dir
	s.mu.Unlock()
	if dir == "" {
		return 0, fmt.Errorf("pgtest: the server is not running")
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("pgtest: the server's pid: %w", err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	postmaster, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil {
		return 0, fmt.Errorf("pgtest: the server's pid %q: %w", line, err)
	}
	fields, err := procStat(postmaster)
	if err != nil {
		return 0, err
	}
	// utime, stime, cutime, cstime: fields 14-17 of stat(5), 11-14 after
	// the command's closing parenthesis.
	ticks := sum(fields[11:15])
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("pgtest: %w", err)
	}
	parent := strconv.Itoa(postmaster)
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == postmaster {
			continue
		}
		f, err := procStat(pid)
		if err != nil || f[1] != parent { // ended meanwhile, or not a child
			continue
		}
		ticks += sum(f[11:13])
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// procStat is process pid's stat(5) fields after its command, the
// state first: the command, in parentheses, may hold spaces.
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	i := bytes.LastIndexByte(b, ')')
	fields := strings.Fields(string(b[i+1:]))
	if i < 0 || len(fields) < 15 {
		return nil, fmt.Errorf("pgtest: /proc/%d/stat: unexpected %q", pid, b)
	}
	return fields, nil
}

func sum(fields []string) int64 {
	var n int64
	for _, f := range fields {
		v, _ := strconv.ParseInt(f, 10, 64)
		n += v
	}
	return n
}
