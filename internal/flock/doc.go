// Package flock takes advisory locks on open files, for the locks cadre
// needs to die with their process: a task owner's claim and a session's
// single writer. A flock belongs to the open file, so the kernel drops it
// when the file's last descriptor closes, however the process ends: a
// SIGKILLed holder leaves nothing stale behind. Only systems with flock(2)
// have it; elsewhere its users keep no such lock.
package flock
