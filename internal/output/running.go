package output

// runningTasks are the background tasks running, in start order. A run of
// 10,000 children ends each one and asks about each notification, so
// lookups and removals take constant time: a removal leaves a hole, and
// the list is packed again once holes are half of it.
type runningTasks struct {
	list  []backgroundTaskJSON // a hole has no TaskID
	at    map[string]int       // TaskID → index in list
	holes int
}

func (r *runningTasks) add(t backgroundTaskJSON) {
	if r.at == nil {
		r.at = map[string]int{}
	}
	r.at[t.TaskID] = len(r.list)
	r.list = append(r.list, t)
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
	r.holes++
	if r.holes > len(r.list)/2 {
		r.pack()
	}
	return true
}

func (r *runningTasks) pack() {
	n := 0
	for _, t := range r.list {
		if t.TaskID != "" {
			r.list[n] = t
			r.at[t.TaskID] = n
			n++
		}
	}
	clear(r.list[n:])
	r.list, r.holes = r.list[:n], 0
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
