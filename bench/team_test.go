//go:build unix

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cadre-dev/cadre/internal/provider/script"
	"github.com/cadre-dev/cadre/llm"
)

// The team benchmark (issue 26): a lead plans teamTasks dependent tasks
// and adds teamMates teammates, who work the shared list through
// TaskList and TaskUpdate until nothing is left, then go idle; the -p run
// ends once all are idle.
const (
	teamTasks = 200
	teamMates = 8
	// teamWidth is the tasks of one layer of the plan: a task of layer
	// L > 0 is blocked by two of layer L-1 (a chain through the layers
	// and a fan-in at every task), so a layer opens only as the one
	// before it completes, and teammates wait at every layer's edge.
	teamWidth = 10
	// teamTimeout bounds one run: a teammate that never idles, or a task
	// nobody can claim, fails the benchmark instead of hanging it.
	teamTimeout = 5 * time.Minute
)

// teamBlockers are the tasks that block task id (1-based), by the layers
// above.
func teamBlockers(id int) []string {
	layer, pos := (id-1)/teamWidth, (id-1)%teamWidth
	if layer == 0 {
		return nil
	}
	prev := (layer-1)*teamWidth + 1
	return []string{fmt.Sprint(prev + pos), fmt.Sprint(prev + (pos+1)%teamWidth)}
}

// The patterns the teammates' script reads tool results with (TaskList's
// lines are "#3 [pending] subject (owner) [blocked by #1]"; the subjects
// hold no parentheses or brackets): a free task is pending with neither
// an owner nor an open blocker.
const (
	teamFreeRE = `(?m)^#(\d+) \[pending\] [^()\[\]\n]*$`
	teamOpenRE = `\[(pending|in_progress)\]`
)

// teamScenario is the scripted model of the run. The lead's first turn
// creates the tasks, its second adds the dependencies, its third adds the
// teammates; every later turn (notifications of completions and idle
// teammates) answers with a short text. A teammate ("*") lists the tasks,
// then loops: complete the task it has just claimed; else claim the first
// free task; else, when nothing is open, say so and end its turn (idle);
// else (everything open is blocked or owned) wait 20 ms and list again.
func teamScenario() string {
	const usage = "      usage: {input_tokens: 1200, output_tokens: 40}\n"
	var b strings.Builder
	b.WriteString("model: bench-team\nagents:\n  main:\n    - text: \"Planning the work.\"\n      tool_use:\n")
	for id := 1; id <= teamTasks; id++ {
		fmt.Fprintf(&b, "        - {name: TaskCreate, input: {subject: \"step %d\", description: \"Do step %d of the job.\"}}\n", id, id)
	}
	b.WriteString(usage + "    - text: \"Ordering the steps.\"\n      tool_use:\n")
	for id := 1; id <= teamTasks; id++ {
		if by := teamBlockers(id); by != nil {
			fmt.Fprintf(&b, "        - {name: TaskUpdate, input: {taskId: \"%d\", addBlockedBy: [\"%s\"]}}\n", id, strings.Join(by, `", "`))
		}
	}
	b.WriteString(usage + "    - text: \"Adding the team.\"\n      tool_use:\n")
	for i := 1; i <= teamMates; i++ {
		fmt.Fprintf(&b, "        - {name: Agent, input: {name: mate%d, subagent_type: general-purpose, description: \"mate %d joins\", prompt: \"Work through the team's task list until nothing is left.\"}}\n", i, i)
	}
	b.WriteString(usage + "    - text: \"Noted.\"\n      repeat: true\n" + usage)
	q := func(s string) string { return strings.ReplaceAll(s, `\`, `\\`) } // a Go template's string literal
	alt := "          usage: {input_tokens: 1200, output_tokens: 40}\n"
	fmt.Fprintf(&b, `  "*":
    - tool_use: [{name: TaskList}]
%s    - repeat: true
      choose:
        - when: '{{match "It is yours" .LastToolResult}}'
          tool_use: [{name: TaskUpdate, input: {taskId: '{{find "^Updated task #(\\d+)" .LastToolResult}}', status: completed}}]
%s        - when: '{{match "%s" .LastToolResult}}'
          tool_use: [{name: TaskUpdate, input: {taskId: '{{find "%s" .LastToolResult}}', status: in_progress}}]
%s        - when: '{{and (match "^#" .LastToolResult) (not (match "%s" .LastToolResult))}}'
          text: "Nothing is left on the list."
%s        - when: '{{match "^#" .LastToolResult}}'
          delay: 20ms
          tool_use: [{name: TaskList}]
%s        - tool_use: [{name: TaskList}]
%s`, usage, alt, q(teamFreeRE), q(teamFreeRE), alt, q(teamOpenRE), alt, alt, alt)
	return b.String()
}

// teamRun is what one run did, as read from the store afterwards.
type teamRun struct {
	// lists, claims, lostClaims, completions: the teammates' TaskList
	// calls, their claims that won and those that lost (another teammate
	// had the task by then), their completions.
	lists, claims, lostClaims, completions int
	// storeCalls are the task list's store operations of the run: one
	// read per TaskList, one read-modify-write per TaskCreate and
	// TaskUpdate, the lead's included.
	storeCalls int
	// nodes is how many distinct nodes ran teammates; busiest how many
	// teammates the node that ran the most ran.
	nodes, busiest int
}

var (
	claimRE    = regexp.MustCompile(`^Updated task #(\d+): .*It is yours \((\w+)\)`)
	completeRE = regexp.MustCompile(`^Updated task #(\d+): status\. .*Check TaskList for the next free task\.$`)
	// lostRE is what a claim that lost says: another teammate has the
	// task (at it, or done with it). Any other failure fails the run.
	lostRE = regexp.MustCompile(`task #\d+ is already owned by \w+$`)
)

// checkTeam reads the run of session sid back from the store through
// cadre's own commands and fails b unless every task was completed
// exactly once, by the one teammate that claimed it, and none is missing.
func (p project) checkTeam(b *testing.B, sid string) teamRun {
	b.Helper()
	out, _ := p.exec(b, "tasks", "team", sid, "--json")
	var list []struct{ ID, Status, Owner string }
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		b.Fatalf("cadre tasks team --json: %v:\n%s", err, out)
	}
	if len(list) != teamTasks {
		b.Fatalf("the team's list holds %d tasks, want %d", len(list), teamTasks)
	}
	owner := map[string]string{}
	for _, it := range list {
		if it.Status != "completed" || it.Owner == "" || it.Owner == "main" {
			b.Fatalf("task #%s is %s, owned by %q: want completed by a teammate", it.ID, it.Status, it.Owner)
		}
		owner[it.ID] = it.Owner
	}
	out, _ = p.exec(b, "tasks", "--session", sid, "--limit", "1000", "--json")
	var tasks []struct {
		Name, Status, Owner string
		Child               string `json:"child_session_id"`
	}
	if err := json.Unmarshal([]byte(out), &tasks); err != nil {
		b.Fatalf("cadre tasks --json: %v", err)
	}
	var r teamRun
	sessions, nodes := map[string]string{}, map[string]int{}
	for _, t := range tasks {
		if t.Name != "" {
			if t.Status != "completed" {
				b.Fatalf("teammate %s's record is %s, want completed (idle)", t.Name, t.Status)
			}
			sessions[t.Child] = t.Name
			nodes[t.Owner]++
		}
	}
	if len(sessions) != teamMates {
		b.Fatalf("%d teammate sessions, want %d: %s", len(sessions), teamMates, out)
	}
	r.nodes = len(nodes)
	for _, n := range nodes {
		r.busiest = max(r.busiest, n)
	}
	for id := 1; id <= teamTasks; id++ {
		r.storeCalls++ // the lead's TaskCreate
		if teamBlockers(id) != nil {
			r.storeCalls++ // and its TaskUpdate adding the blockers
		}
	}
	claimedBy, completedBy := map[string][]string{}, map[string][]string{}
	for child, name := range sessions {
		out, _ := p.exec(b, "sessions", "show", child, "--json")
		var s struct {
			Transcript []struct {
				Message *llm.Message `json:"message"`
			} `json:"transcript"`
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			b.Fatalf("cadre sessions show %s --json: %v", child, err)
		}
		calls := map[string]string{} // tool_use id → tool name
		for _, e := range s.Transcript {
			if e.Message == nil {
				continue
			}
			for _, blk := range e.Message.Content {
				switch blk.Type {
				case llm.BlockToolUse:
					calls[blk.ID] = blk.Name
					r.storeCalls++
					if blk.Name == "TaskList" {
						r.lists++
					}
				case llm.BlockToolResult:
					text := blk.ResultText()
					if calls[blk.ToolUseID] != "TaskUpdate" {
						if blk.IsError {
							b.Fatalf("%s: %s failed: %s", name, calls[blk.ToolUseID], text)
						}
						continue
					}
					if m := claimRE.FindStringSubmatch(text); m != nil && !blk.IsError {
						if m[2] != name {
							b.Fatalf("%s's claim of #%s made %s its owner", name, m[1], m[2])
						}
						claimedBy[m[1]] = append(claimedBy[m[1]], name)
						r.claims++
					} else if m := completeRE.FindStringSubmatch(text); m != nil && !blk.IsError {
						completedBy[m[1]] = append(completedBy[m[1]], name)
						r.completions++
					} else if blk.IsError && lostRE.MatchString(text) {
						r.lostClaims++
					} else {
						b.Fatalf("%s: a TaskUpdate result the benchmark does not know: %q", name, text)
					}
				}
			}
		}
	}
	for id, who := range owner {
		if c, d := claimedBy[id], completedBy[id]; len(c) != 1 || len(d) != 1 || c[0] != who || d[0] != who {
			b.Fatalf("task #%s, owned by %s: claimed by %v, completed by %v; want once each, by its owner", id, who, c, d)
		}
	}
	if r.claims != teamTasks || r.completions != teamTasks {
		b.Fatalf("%d claims and %d completions won, want %d each", r.claims, r.completions, teamTasks)
	}
	return r
}

// teamProject is a project with the team scenario and teams on.
func teamProject(b *testing.B) (project, string) {
	p := newProject(b, "CADRE_AGENT_TEAMS=1")
	scenario := filepath.Join(p.dir, "team.yaml")
	if err := os.WriteFile(scenario, []byte(teamScenario()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p, scenario
}

// runTeam execs the lead's `cadre -p` and returns its session id; a run
// that fails, or whose result is no success, stops the benchmark.
func (p project) runTeam(b *testing.B, scenario string) string {
	ctx, cancel := context.WithTimeout(context.Background(), teamTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", "Plan the job and run it with a team.", "--output-format", "stream-json",
		"--model", "script:"+scenario, "--trust-workspace")
	cmd.Dir, cmd.Env = p.dir, p.vars
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("cadre -p (the lead): %v\nstderr: %s", err, tail(errb.Bytes()))
	}
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	var res struct {
		Type, Subtype string
		IsError       bool   `json:"is_error"`
		SessionID     string `json:"session_id"`
	}
	if err := json.Unmarshal(lines[len(lines)-1], &res); err != nil || res.Type != "result" || res.IsError || res.SessionID == "" {
		b.Fatalf("the lead's last line is no successful result (%v):\n%s\nstderr: %s", err, lines[len(lines)-1], tail(errb.Bytes()))
	}
	// The lead heard each teammate go idle, once, with its last words.
	idle := 0
	for _, l := range lines {
		if bytes.HasPrefix(l, []byte(`{"type":"system","subtype":"task_notification"`)) {
			if !bytes.Contains(l, []byte(`"status":"completed","summary":"Nothing is left on the list."`)) {
				b.Fatalf("a notification that is no teammate's idle notice: %s", l)
			}
			idle++
		}
	}
	if idle != teamMates {
		b.Fatalf("%d idle notices reached the lead, want %d", idle, teamMates)
	}
	if bytes.Contains(errb.Bytes(), []byte("compaction failed")) {
		b.Fatalf("a compaction was tried on a context measured small:\n%s", tail(errb.Bytes()))
	}
	return res.SessionID
}

func tail(b []byte) []byte { return b[max(0, len(b)-3000):] }

// reportTeam reports the figures of runs.
func reportTeam(b *testing.B, runs []teamRun, xacts int64) {
	var sum teamRun
	for _, r := range runs {
		sum.lists += r.lists
		sum.lostClaims += r.lostClaims
		sum.storeCalls += r.storeCalls
		sum.nodes = max(sum.nodes, r.nodes)
		sum.busiest += r.busiest
	}
	n := float64(len(runs))
	b.ReportMetric(float64(sum.storeCalls)/n, "list-store-calls/op")
	b.ReportMetric(float64(sum.lists)/n, "TaskList-calls/op")
	b.ReportMetric(float64(sum.lostClaims)/n, "lost-claims/op")
	if xacts > 0 {
		b.ReportMetric(float64(xacts)/n, "pg-xacts/op")
	}
	if xacts > 0 { // the run on two nodes
		b.ReportMetric(float64(sum.nodes), "teammate-nodes")
		b.ReportMetric(float64(sum.busiest)/n, "busiest-node-teammates/op")
	}
}

// BenchmarkTeamBinary/sqlite is one `cadre -p` (SQLite, one node) whose
// lead spawns 8 teammates that work through 200 dependent tasks; every
// run is checked from the store: each task completed exactly once, by
// the teammate that claimed it, none lost. ns/op is the wall time of
// the run, exit included. list-store-calls/op counts the task list's
// store operations (SQLite keeps no counters: they are counted from the
// transcripts, one per task tool call); lost-claims/op the claims a
// teammate lost to another (or made on a task that had just been
// taken).
//
// BenchmarkTeamBinary/postgres-2-nodes is the same on PostgreSQL with
// store.dispatch any: the lead's `cadre -p` and a `cadre serve` on the
// same database, each a node working the shared queue, so teammates run
// on both. pg-xacts/op is the database's committed and rolled-back
// transactions over the run (pg_stat_database; every autocommit
// statement counts one), both processes included; teammate-nodes how
// many nodes ran teammates at most over the runs, busiest-node-teammates
// how many of the 8 the busier node ran (a run takes whichever node's
// queue worker fetches it first, so the split is not fixed).
func BenchmarkTeamBinary(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		p, scenario := teamProject(b)
		writeLane(b, p)
		var runs []teamRun
		for b.Loop() {
			sid := p.runTeam(b, scenario)
			b.StopTimer()
			runs = append(runs, p.checkTeam(b, sid))
			b.StartTimer()
		}
		reportTeam(b, runs, 0)
	})
	b.Run("postgres-2-nodes", func(b *testing.B) {
		p, scenario := teamProject(b)
		writeLane(b, p)
		base := p.vars
		var runs []teamRun
		var xacts int64
		for b.Loop() {
			b.StopTimer()
			url := pg.URL(b)
			lead := append(slices.Clone(base), "CADRE_STORE_URL="+url)
			home := b.TempDir() // the lead's own CADRE_HOME: dispatch any
			if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"store": {"dispatch": "any"}}`), 0o644); err != nil {
				b.Fatal(err)
			}
			p.vars = append(lead, "CADRE_HOME="+home)
			second := p.startNode(b, append(slices.Clone(lead), "CADRE_HOME="+b.TempDir()), scenario)
			before := pgXacts(b, url)
			b.StartTimer()
			sid := p.runTeam(b, scenario)
			b.StopTimer()
			second.stop(b)
			xacts += pgXacts(b, url) - before
			runs = append(runs, p.checkTeam(b, sid))
			p.vars = base
			b.StartTimer()
		}
		reportTeam(b, runs, xacts)
	})
}

// writeLane gives the project a lane wide enough for the whole team.
func writeLane(b *testing.B, p project) {
	if err := os.MkdirAll(filepath.Join(p.dir, ".cadre"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, ".cadre", "settings.json"), []byte(`{"subagents": {"maxConcurrent": 16}}`), 0o644); err != nil {
		b.Fatal(err)
	}
}

// node is a second cadre process on the store: `cadre serve`, which works
// the shared queue (store.dispatch any is its default).
type node struct {
	cmd     *exec.Cmd
	errb    *bytes.Buffer
	drained chan struct{}
}

func (p project) startNode(b *testing.B, vars []string, scenario string) *node {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--token", "bench-token", "--model", "script:"+scenario, "--trust-workspace")
	cmd.Dir, cmd.Env = p.dir, vars
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	n := &node{cmd: cmd, errb: &bytes.Buffer{}, drained: make(chan struct{})}
	cmd.Stderr = n.errb
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "cadre serve: listening on ") {
			go func() { io.Copy(io.Discard, out); close(n.drained) }()
			return n
		}
	}
	cmd.Wait()
	b.Fatalf("the second node said nowhere it listens: %s", tail(n.errb.Bytes()))
	return nil
}

// stop ends the node with SIGTERM, as a service manager would, and fails
// b unless it exits cleanly.
func (n *node) stop(b *testing.B) {
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	<-n.drained
	if err := n.cmd.Wait(); err != nil {
		b.Fatalf("the second node after SIGTERM: %v: %s", err, tail(n.errb.Bytes()))
	}
}

// pgXacts is the database's transactions so far, committed and rolled
// back. The server's statistics are flushed by each backend as it ends
// its transactions (at most once a second while busy) and when it
// exits: read after both nodes exited, the count is whole.
func pgXacts(b *testing.B, url string) int64 {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, `SELECT pg_stat_force_next_flush(), xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(nil, &n); err != nil {
		b.Fatal(err)
	}
	return n
}

// TestTeamScenarioLoads: the generated scenario is one the scripted model
// accepts, so a typo in it fails here, not after a build and a run.
func TestTeamScenarioLoads(t *testing.T) {
	if _, err := script.Parse("team.yaml", []byte(teamScenario())); err != nil {
		t.Fatal(err)
	}
}
