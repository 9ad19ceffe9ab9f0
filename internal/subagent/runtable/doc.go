// Package runtable is the spawn core's table of this process's runs in
// progress, by id, and of what spawns in flight have checked but not yet
// launched — a session being continued, a name being taken, a place among
// a parent's children — under one lock. Counting the runs and the
// reservations under the same lock is what makes a check hold for spawns
// that run at the same time: ten spawn calls of one message each saw
// "none active" before any of them had started.
//
// It also keeps whether a run still takes messages (Closing, Queue): a
// message is queued under the lock its run closes under, so none is lost
// between the two.
package runtable
