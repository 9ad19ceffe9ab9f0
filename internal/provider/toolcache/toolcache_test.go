package toolcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/cadre-dev/cadre/llm"
)

func specs(desc string) []llm.ToolSpec {
	return []llm.ToolSpec{
		{Name: "Read", Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "Bash", Description: "Run.", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
	}
}

func TestGet(t *testing.T) {
	var c Cache[string]
	builds := 0
	build := func(s []llm.ToolSpec) (string, error) {
		builds++
		return fmt.Sprintf("%s/%d", s[0].Description, builds), nil
	}
	get := func(s []llm.ToolSpec) string {
		t.Helper()
		v, err := c.Get(s, build)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	first := get(specs("Read a file."))
	if again := get(specs("Read a file.")); again != first || builds != 1 {
		t.Errorf("an equal set (other slices) got %q after %d builds, want %q from one", again, builds, first)
	}
	if other := get(specs("Read any file.")); other == first || builds != 2 {
		t.Errorf("another description got %q after %d builds, want a second build", other, builds)
	}

	// The caller reuses its bytes: the cache compares with its own copy.
	mine := specs("Read a file.")
	get(mine)
	mine[1].InputSchema[2] = 'X'
	builds = 0
	if get(mine); builds != 1 {
		t.Errorf("a schema changed in place was served from the cache")
	}
}

func TestGetKeepsNoErrorAndBoundsItsSize(t *testing.T) {
	var c Cache[int]
	boom := errors.New("boom")
	if _, err := c.Get(specs("x"), func([]llm.ToolSpec) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	builds := 0
	build := func([]llm.ToolSpec) (int, error) { builds++; return builds, nil }
	if _, err := c.Get(specs("x"), build); err != nil || builds != 1 {
		t.Fatalf("after a failed build: err %v, %d builds; want a new build", err, builds)
	}
	for i := range 3 * size {
		c.Get(specs(fmt.Sprint(i)), build)
	}
	if len(c.entries) != size {
		t.Errorf("%d entries, want at most %d", len(c.entries), size)
	}
}

// TestEqualCoversToolSpec fails when llm.ToolSpec gains a field that equal
// does not compare: two sets differing only there would share an encoding.
func TestEqualCoversToolSpec(t *testing.T) {
	var names []string
	for f := range reflect.TypeFor[llm.ToolSpec]().Fields() {
		names = append(names, f.Name)
	}
	if want := []string{"Name", "Description", "InputSchema"}; !reflect.DeepEqual(names, want) {
		t.Errorf("llm.ToolSpec has fields %v; equal compares %v: update it", names, want)
	}
}

// Callers that miss on one set at once build it once and all get that
// build: the ten children of a message ask for their set together.
func TestGetBuildsOnceForConcurrentMisses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c Cache[*int]
		release := make(chan struct{})
		var builds atomic.Int64
		build := func([]llm.ToolSpec) (*int, error) {
			builds.Add(1)
			<-release
			v := 1
			return &v, nil
		}
		const n = 10
		got := make([]*int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				v, err := c.Get(specs("Read a file."), build)
				if err != nil {
					t.Error(err)
				}
				got[i] = v
			})
		}
		synctest.Wait() // every caller is in Get: building or waiting
		close(release)
		wg.Wait()
		if b := builds.Load(); b != 1 {
			t.Errorf("%d concurrent misses on one set built it %d times, want once", n, b)
		}
		for i, v := range got {
			if v != got[0] {
				t.Errorf("caller %d got another build's value", i)
			}
		}
		if len(c.entries) != 1 {
			t.Errorf("%d entries for one set, want 1", len(c.entries))
		}
	})
}

// A build that fails fails the callers that waited for it, and is not kept.
func TestGetConcurrentMissesShareAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c Cache[int]
		boom := errors.New("boom")
		release := make(chan struct{})
		build := func([]llm.ToolSpec) (int, error) { <-release; return 0, boom }
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { _, errs[i] = c.Get(specs("x"), build) })
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		for i, err := range errs {
			if !errors.Is(err, boom) {
				t.Errorf("caller %d: error %v, want boom", i, err)
			}
		}
		if len(c.entries) != 0 {
			t.Errorf("a failed build left %d entries", len(c.entries))
		}
	})
}
