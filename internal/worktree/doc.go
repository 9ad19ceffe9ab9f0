// Package worktree gives a code-editing subagent its own git checkout
// (DESIGN S-W1, isolation "worktree"), so its edits never touch the
// working tree the user and the parent agent are in.
//
// Create adds a linked worktree on a new branch cadre/<name>, where name is
// the agent id, starting at the HEAD of the worktree the caller's cwd is in.
// Trees live in the repository's state directory,
// <git-common-dir>/cadre-worktrees/<name> (normally .git/cadre-worktrees),
// so they never show up as untracked files of the main checkout and all
// worktrees of one repository share one place. Rel maps the caller's cwd to
// the same place inside the new tree, so a child started in a subdirectory
// keeps its place. The commit a tree started from is also written to the
// worktree's private admin directory (git deletes it with the worktree), so
// Sweep can report it for trees a crashed process left behind.
//
// Finish applies the keep/remove rule when the run ends: if the branch and
// the worktree's HEAD are still at the starting commit and `git status`
// shows nothing (tracked or untracked changes; ignored files do not count),
// the worktree and the branch are removed. Otherwise both are kept and the
// Outcome names them, so the parent can review, merge or discard the work.
// A locked worktree is always kept. Finish runs git under its own bounded
// context, so a cancelled run is still cleaned up, and it never leaves git
// with a registered worktree whose directory is gone.
//
// A scratch tree (cadre replay's) is made with Create too, then given the
// caller's checkout as it is now: Overlay copies its uncommitted changes
// over (never writing through a symlink the tree holds), Snapshot commits
// them on the tree's branch so that Changed reports only what happens
// after, and Discard removes the tree and its branch whatever they hold.
//
// Everything is done by the git binary on PATH, with the repository
// located explicitly (-C), prompts disabled and repository-locating
// environment variables (GIT_DIR and friends) dropped; no git configuration
// is relied on and nothing is committed. The repository is not trusted:
// every git call runs with the programs its configuration could start
// (fsmonitor, hooks, filter drivers, transports) switched off, so files in
// .git or a committed .gitattributes cannot make cadre run a command (see
// git.go). Files under a filter (Git LFS, say) are checked out as stored.
package worktree
