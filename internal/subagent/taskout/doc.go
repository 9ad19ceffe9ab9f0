// Package taskout is a task's output: where its output file is
// (<OutputDir>/<id>.output, none when a store keeps the run's transcript),
// who may read it (Files.Own, the permission policy's ReadableFile), and
// its text for readers of a run in another process or that has ended
// (Files.Output, Files.Tail): a plain-text log of what the run did
// (internal/runlog), from its output file or its transcript. While a run
// is in this process its log comes from memory (runs.Live.OutputTail).
package taskout
