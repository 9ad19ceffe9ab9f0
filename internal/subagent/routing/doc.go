// Package routing decides which agent a spawn call runs — the one its
// subagent_type names, the one whose session it continues, a remote one —
// and which agents a caller's spawn tool lists and may name (S-A2; the
// gateway's allowAgents, S-P1); and which agent a message names
// (Addressee). Its refusals name what the caller may use
// instead, so that the model picks a permitted agent rather than
// guessing. Whether a spawn is permitted at all is the permission
// policy's (permission.Policy.PermitSpawn); how a child runs once routed
// is internal/spawnpolicy's.
package routing
