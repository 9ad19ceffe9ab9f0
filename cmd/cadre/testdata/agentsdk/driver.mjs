// driver.mjs runs one scenario of the Agent SDK end-to-end test: it drives
// the executable named by CADRE_SDK_EXECUTABLE through the real
// @anthropic-ai/claude-agent-sdk query() and prints one JSON object on
// stdout: every message the program received, and what each callback saw.
//
// usage: node driver.mjs SCENARIO   (cwd: the project; NODE_PATH: node_modules)
import { query } from '@anthropic-ai/claude-agent-sdk';

const scenario = process.argv[2];
const executable = process.env.CADRE_SDK_EXECUTABLE;
const report = { scenario, messages: [], calls: [], errors: [] };

function base(extra = {}) {
  return {
    pathToClaudeCodeExecutable: executable,
    cwd: process.cwd(),
    env: { ...process.env },
    stderr: (s) => process.stderr.write(s),
    ...extra,
  };
}

async function collect(q, onResult) {
  for await (const m of q) {
    report.messages.push(m);
    if (m.type === 'result' && onResult) await onResult(m);
  }
}

const scenarios = {
  // A string prompt with default options.
  async default() {
    await collect(query({ prompt: 'SAY-HELLO', options: base() }));
  },
  // A synchronous subagent, then two in parallel.
  async subagents() {
    await collect(query({ prompt: 'SPAWN-SYNC', options: base() }));
  },
  // A background subagent: its notification turn's result must arrive too.
  async background() {
    await collect(query({ prompt: 'SPAWN-BG', options: base() }));
  },
  // canUseTool and a PreToolUse hook for a Bash call in default mode.
  async permission() {
    const options = base({
      permissionMode: 'default',
      canUseTool: async (toolName, input, opts) => {
        report.calls.push({ kind: 'canUseTool', toolName, input, toolUseID: opts.toolUseID, agentID: opts.agentID ?? null });
        return { behavior: 'allow', updatedInput: input };
      },
      hooks: {
        PreToolUse: [{
          matcher: 'Bash',
          hooks: [async (input, toolUseID) => {
            report.calls.push({ kind: 'PreToolUse', hook_event_name: input.hook_event_name, tool_name: input.tool_name, tool_input: input.tool_input, toolUseID: toolUseID ?? null });
            return {};
          }],
        }],
      },
    });
    await collect(query({ prompt: 'RUN-BASH', options }));
  },
  // Streaming input: two messages, two results; supportedCommands() and
  // setPermissionMode() answered in between.
  async stream() {
    let firstResult;
    const gotFirst = new Promise((resolve) => { firstResult = resolve; });
    async function* input() {
      yield { type: 'user', message: { role: 'user', content: 'STREAM-ONE' }, parent_tool_use_id: null, session_id: '' };
      await gotFirst;
      yield { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'STREAM-TWO' }] }, parent_tool_use_id: null, session_id: '' };
    }
    const q = query({ prompt: input(), options: base() });
    let results = 0;
    await collect(q, async () => {
      results++;
      if (results === 1) {
        const commands = await q.supportedCommands();
        report.calls.push({ kind: 'supportedCommands', ok: Array.isArray(commands), count: commands.length, names: commands.map((c) => c.name) });
        await q.setPermissionMode('acceptEdits');
        report.calls.push({ kind: 'setPermissionMode', ok: true });
        firstResult();
      }
    });
  },
};

const run = scenarios[scenario];
if (!run) {
  console.error(`unknown scenario ${scenario}`);
  process.exit(2);
}
const timer = setTimeout(() => {
  report.errors.push('driver timed out');
  console.log(JSON.stringify(report));
  process.exit(3);
}, Number(process.env.DRIVER_TIMEOUT_MS || 60000));
try {
  await run();
} catch (e) {
  report.errors.push(String(e && e.stack || e));
}
clearTimeout(timer);
console.log(JSON.stringify(report));
process.exit(0);
