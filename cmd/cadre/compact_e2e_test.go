package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// compactScenario reads a large file turn after turn, so the context
// grows past a small window unless older turns are compacted. The usage of
// every reply is the scripted model's estimate of the request it answered.
func compactScenario(turns int) string {
	var b strings.Builder
	b.WriteString("agents:\n  main:\n")
	for i := 1; i <= turns; i++ {
		fmt.Fprintf(&b, "    - text: \"reading, step %d\"\n      tool_use:\n        - name: Read\n          input: {file_path: big.txt}\n", i)
	}
	b.WriteString("    - text: \"FINISHED after reading\"\n")
	b.WriteString("    - text: \"RESUMED and still going\"\n")
	b.WriteString("  \"main:compact\":\n    - &s {text: \"SUMMARY: the big file was read several times.\"}\n")
	for range 40 {
		b.WriteString("    - *s\n")
	}
	return b.String()
}

func TestCompactionKeepsALongSessionUnderTheWindow(t *testing.T) {
	const window = 8000
	e := newEnv(t)
	e.write("big.txt", strings.Repeat("a line of the big file, read again and again\n", 130)) // ~6 KB, ~1.5k tokens
	e.write("s.yaml", compactScenario(12))
	e.write(".cadre/settings.json", fmt.Sprintf(`{"compaction": {"window": %d, "threshold": 0.6, "keepRecent": 2}}`, window))
	p := e.run("", "-p", "read it many times", "--model", "script:s.yaml", "--output-format", "stream-json", "--verbose")
	if p.code != 0 {
		t.Fatalf("exit %d: %s\n%s", p.code, p.stderr, p.stdout)
	}
	ls := lines(t, p.stdout)
	boundaries, maxIn := 0, 0.0
	var sid string
	for _, l := range ls {
		sid, _ = l["session_id"].(string)
		if l["type"] == "system" && l["subtype"] == "compact_boundary" {
			boundaries++
		}
		if l["type"] == "assistant" {
			u := l["message"].(map[string]any)["usage"].(map[string]any)
			if in := u["input_tokens"].(float64); in > maxIn {
				maxIn = in
			}
		}
	}
	if boundaries == 0 {
		t.Fatal("no compact_boundary line: the session was never compacted")
	}
	if maxIn >= window {
		t.Errorf("a request reached %v tokens, over the %d-token window", maxIn, window)
	}
	if res := ls[len(ls)-1]; res["result"] != "FINISHED after reading" {
		t.Fatalf("result %v", res["result"])
	}
	t.Logf("%d compactions; largest request %v tokens of %d", boundaries, maxIn, window)

	// The transcript marks the summary, and the session resumes from it.
	show := e.run("", "sessions", "show", sid, "--json")
	var rec struct {
		Transcript []struct {
			Type, Subtype string
		} `json:"transcript"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &rec); err != nil {
		t.Fatalf("sessions show: %v\n%s", err, show.stdout)
	}
	marked := 0
	for _, en := range rec.Transcript {
		if en.Type == "summary" && en.Subtype == "compact_boundary" {
			marked++
		}
	}
	if marked != boundaries {
		t.Errorf("transcript marks %d summaries, stream showed %d", marked, boundaries)
	}
	again := e.run("", "-p", "go on", "--resume", sid, "--model", "script:s.yaml")
	if again.code != 0 || strings.TrimSpace(again.stdout) != "RESUMED and still going" {
		t.Fatalf("resume: exit %d, %q, %s", again.code, again.stdout, again.stderr)
	}
}
