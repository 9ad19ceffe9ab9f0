package output

import "bytes"

// runningTasks are the background tasks running, in start order. A run of
// 10,000 children ends each one and asks about each notification, so
// lookups and removals take constant time: a removal leaves a hole, and
// the list is packed again once holes are half of it.
type runningTasks struct {
	list  []backgroundTaskJSON // a hole has no TaskID
	at    map[string]int       // TaskID → index in list
	holes int
	// raw is each entry's JSON, encoded when it was added: the list is
	// written after every burst of changes (background_tasks_changed),
	// and at 10,000 tasks most of every line is entries that did not
	// change — 44 MB of a run's 94 MB of stream-json, encoded again
	// each time.
	raw [][]byte
	// size is the bytes of the entries' JSON, commas included.
	size int
}

func (r *runningTasks) add(t backgroundTaskJSON) {
	if r.at == nil {
		r.at = map[string]int{}
	}
	var b bytes.Buffer
	if err := encode(&b, t); err != nil {
		// Strings only: encoding cannot fail.
		panic(err)
	}
	raw := bytes.Clone(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	r.at[t.TaskID] = len(r.list)
	r.list = append(r.list, t)
	r.raw = append(r.raw, raw)
	r.size += len(raw) + 1
}

func (r *runningTasks) has(id string) bool {
	_, ok := r.at[id]
	return ok
}

// remove takes task id out of the list, reporting whether it was in it.
func (r *runningTasks) remove(id string) bool {
	i, ok := r.at[id]
	if !ok {
		return false
	}
	delete(r.at, id)
	r.list[i] = backgroundTaskJSON{}
	r.size -= len(r.raw[i]) + 1
	r.raw[i] = nil
	r.holes++
	if r.holes > len(r.list)/2 {
		r.pack()
	}
	return true
}

func (r *runningTasks) pack() {
	n := 0
	for i, t := range r.list {
		if t.TaskID != "" {
			r.list[n], r.raw[n] = t, r.raw[i]
			r.at[t.TaskID] = n
			n++
		}
	}
	clear(r.list[n:])
	clear(r.raw[n:])
	r.list, r.raw, r.holes = r.list[:n], r.raw[:n], 0
}

// snapshot is a copy of the running tasks, in start order.
func (r *runningTasks) snapshot() []backgroundTaskJSON {
	out := make([]backgroundTaskJSON, 0, len(r.at))
	for _, t := range r.list {
		if t.TaskID != "" {
			out = append(out, t)
		}
	}
	return out
}

// appendJSON appends the running tasks' JSON array, in start order — what
// encoding snapshot writes — put together from the entries' own.
func (r *runningTasks) appendJSON(b []byte) []byte {
	b = append(b, '[')
	first := true
	for _, raw := range r.raw {
		if raw == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		b, first = append(b, raw...), false
	}
	return append(b, ']')
}
