// Drives `cadre acp` with the official ACP TypeScript library, as an editor
// would, and prints what it saw as one JSON report on stdout; the Go test
// (acp_e2e_test.go) makes the assertions.
//
// usage: node acp_driver.mjs <node_modules> <cadre binary> <cwd> <MCP everything server>
//
// The session: initialize; session/new; a first prompt (the fake model
// starts a subagent whose Bash call asks permission: the driver allows it);
// a second that starts a background subagent, after which the driver waits
// for the notification turn's updates; a third whose Bash call the driver
// allows, then cancels once that call is seen running; then session/load
// of the same session in a second connection, which replays its history,
// with an MCP server whose echo tool the next prompt uses.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [modules, cadre, cwd, everything] = process.argv.slice(2);
const acp = await import(pathToFileURL(path.join(modules, "@agentclientprotocol/sdk/dist/v1/stable/acp.js")).href);
const { client, ndJsonStream, methods } = acp;

// connect starts `cadre acp` and runs op on a connection to it.
async function connect(report, op) {
  const child = spawn(cadre, ["acp"], { cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  let cancelOn = null; // the tool call whose running state triggers session/cancel
  const app = client({ name: "cadre-e2e" })
    .onNotification(methods.client.session.update, async ({ params, agent }) => {
      report.push(params.update);
      const u = params.update;
      if (cancelOn && u.sessionUpdate === "tool_call_update" && u.toolCallId === cancelOn && u.status === "in_progress") {
        cancelOn = null;
        report.cancelSent = true;
        await agent.notify(methods.agent.session.cancel, { sessionId: params.sessionId });
      }
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      report.permissionRequests.push(params);
      if ((params.toolCall.title ?? "").includes("sleep")) {
        cancelOn = params.toolCall.toolCallId;
      }
      return { outcome: { outcome: "selected", optionId: "allow" } };
    });
  try {
    await app.connectWith(stream, op);
  } finally {
    child.stdin.end();
    report.exit = await exited;
    report.stderr = stderr;
  }
}

// newReport records a connection; waitFor resolves true once an update
// satisfies ok, false after ms.
function newReport() {
  const r = { updates: [], permissionRequests: [], waiters: [] };
  r.push = (u) => {
    r.updates.push(u);
    r.waiters = r.waiters.filter((w) => !(w.ok(u) && (w.resolve(true), true)));
  };
  r.waitFor = (ok, ms) =>
    new Promise((resolve) => {
      if (r.updates.some(ok)) return resolve(true);
      const w = { ok, resolve };
      r.waiters.push(w);
      setTimeout(() => resolve(false), ms).unref();
    });
  return r;
}

const report = newReport();
const steps = {};
await connect(report, async (agent) => {
  steps.initialize = await agent.request(methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "cadre-e2e", version: "1" },
  });
  const session = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
  steps.sessionId = session.sessionId;
  steps.modes = session.modes;
  steps.first = await agent.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Review the notes with the reviewer." }],
  });
  steps.firstUpdates = report.updates.length;
  steps.background = await agent.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Start the background check." }],
  });
  // The notification turn comes after the prompt's answer, on its own.
  steps.notified = await report.waitFor(
    (u) => u.sessionUpdate === "agent_message_chunk" && u.content?.text?.includes("The background check finished."),
    30000,
  );
  steps.second = await agent.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "Now run the long job." }],
  });
});
steps.cancelSent = report.cancelSent ?? false;

const loaded = newReport();
await connect(loaded, async (agent) => {
  await agent.request(methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
  steps.load = await agent.request(methods.agent.session.load, {
    sessionId: steps.sessionId,
    cwd,
    mcpServers: [{ name: "everything", command: everything, args: [], env: [] }],
  });
  steps.echo = await agent.request(methods.agent.session.prompt, {
    sessionId: steps.sessionId,
    prompt: [{ type: "text", text: "Echo through MCP." }],
  });
});

for (const r of [report, loaded]) {
  delete r.waiters;
}
process.stdout.write(JSON.stringify({ steps, report, loaded }) + "\n");
