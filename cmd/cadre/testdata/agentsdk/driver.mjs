// driver.mjs runs one scenario of the Agent SDK end-to-end test: it drives
// the executable named by CADRE_SDK_EXECUTABLE through the real
// @anthropic-ai/claude-agent-sdk query() and prints one JSON object on
// stdout: every message the program received, and what each callback saw.
//
// usage: node driver.mjs SCENARIO   (cwd: the project; NODE_PATH: node_modules)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
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

async function collect(q, onResult, onMessage) {
  for await (const m of q) {
    report.messages.push(m);
    if (onMessage) await onMessage(m);
    if (m.type === 'result' && onResult) await onResult(m);
  }
}

// expectThrow runs a scenario whose run ends in an error result: the SDK's
// loop throws when the executable exits non-zero after it. What it threw
// is recorded (kind "thrown"), not reported as the driver's failure.
async function expectThrow(run) {
  try {
    await run();
    report.calls.push({ kind: 'thrown', thrown: false });
  } catch (e) {
    report.calls.push({ kind: 'thrown', thrown: true, message: String(e && e.message || e) });
  }
}

// control calls one Query method and records what it answered or threw.
async function control(name, fn) {
  try {
    const value = await fn();
    report.calls.push({ kind: name, ok: true, value: value === undefined ? null : value });
  } catch (e) {
    report.calls.push({ kind: name, ok: false, error: String(e && e.message || e) });
  }
}

const scenarios = {
  // A string prompt with default options.
  // One more directory to work in, beside the project (the test's
  // temporary folder holds both).
  async default() {
    const extra = join(process.cwd(), '..', 'extra');
    mkdirSync(extra, { recursive: true });
    report.calls.push({ kind: 'extraDir', path: extra });
    await collect(query({ prompt: 'SAY-HELLO', options: base({ additionalDirectories: [extra] }) }));
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
        report.calls.push({ kind: 'canUseTool', toolName, input, toolUseID: opts.toolUseID, agentID: opts.agentID ?? null, suggestions: opts.suggestions ?? null, decisionReason: opts.decisionReason ?? null, title: opts.title ?? null, displayName: opts.displayName ?? null, description: opts.description ?? null, blockedPath: opts.blockedPath ?? null });
        // "Always allow", as a program offers it: the suggestions back.
        return { behavior: 'allow', updatedInput: input, updatedPermissions: opts.suggestions ?? [] };
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
  // A Bash call that a deny rule refuses: the run goes on without it.
  async denied() {
    await collect(query({ prompt: 'RUN-BASH', options: base({ disallowedTools: ['Bash(touch:*)'] }) }));
  },
  // A subagent that finishes, then is sent a second message with
  // SendMessage and resumes.
  async resume() {
    await collect(query({ prompt: 'SPAWN-RESUME', options: base() }));
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
  // A run that hits maxTurns ends in an error result, and the loop throws.
  async maxturns() {
    await expectThrow(() => collect(query({ prompt: 'RUN-BASH', options: base({ maxTurns: 1, allowedTools: ['Bash'] }) })));
  },
  // A run stopped by maxBudgetUsd: an error result, and the loop throws.
  async budget() {
    await expectThrow(() => collect(query({ prompt: "RUN-COSTLY", options: base({ maxBudgetUsd: 0.01, allowedTools: ['Bash'] }) })));
  },
  // An interrupted turn: streaming input, interrupt() while a command runs.
  async interrupt() {
    let done;
    const finished = new Promise((resolve) => { done = resolve; });
    async function* input() {
      yield { type: 'user', message: { role: 'user', content: 'RUN-SLOW' }, parent_tool_use_id: null, session_id: '' };
      await finished;
    }
    const q = query({ prompt: input(), options: base({ allowedTools: ['Bash'] }) });
    await expectThrow(() => collect(q, async () => { done(); }, async (m) => {
      if (m.type === 'assistant' && m.parent_tool_use_id === null && JSON.stringify(m.message.content).includes('toolu_slow')) {
        await q.interrupt();
        report.calls.push({ kind: 'interrupt', ok: true });
      }
    }));
  },
  // The control requests a program can send besides those above, against a
  // session with a background subagent that waits.
  async control() {
    let firstResult;
    const gotFirst = new Promise((resolve) => { firstResult = resolve; });
    let stopped;
    const gotStopped = new Promise((resolve) => { stopped = resolve; });
    async function* input() {
      yield { type: 'user', message: { role: 'user', content: 'CONTROL-ONE' }, parent_tool_use_id: null, session_id: '' };
      await gotFirst;
      await gotStopped;
    }
    const q = query({ prompt: input(), options: base({ allowedTools: ['Bash'] }) });
    let taskID = null;
    let results = 0;
    await collect(q, async () => {
      results++;
      if (results !== 1) return;
      await control('mcpServerStatus', () => q.mcpServerStatus());
      await control('getContextUsage', async () => {
        const u = await q.getContextUsage();
        return { totalTokens: u.totalTokens, maxTokens: u.maxTokens, model: u.model, categories: u.categories.length, percentage: u.percentage };
      });
      await control('setMaxThinkingTokens', () => q.setMaxThinkingTokens(2048));
      await control('reloadSkills', async () => { const r = await q.reloadSkills(); return { skills: Array.isArray(r.skills) }; });
      await control('setMcpServers', () => q.setMcpServers({}));
      await control('applyFlagSettings', () => q.applyFlagSettings({ permissions: { allow: ['Bash(echo:*)'] } }));
      await control('rewindFiles', () => q.rewindFiles('00000000-0000-4000-8000-000000000000', { dryRun: true }));
      await control('backgroundTasks', () => q.backgroundTasks('toolu_nosuchcall'));
      await control('stopTask', () => q.stopTask(taskID));
      firstResult();
    }, async (m) => {
      if (m.type === 'system' && m.subtype === 'task_started' && m.tool_use_id === 'toolu_wait') taskID = m.task_id;
      if (m.type === 'system' && m.subtype === 'task_notification' && m.task_id === taskID) stopped();
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
