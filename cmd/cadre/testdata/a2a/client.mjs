// The A2A acceptance client: @a2a-js/sdk's own client against `cadre
// serve`. It prints one JSON report on stdout; the Go test judges it.
//
//   node client.mjs <base url> [token]
//
// With a token, its requests carry "Authorization: Bearer <token>" (the
// card is read without it, as A2A clients do).
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';

const [, , base, token] = process.argv;
const report = { errors: [], first: {}, second: {}, cancel: {} };

function text(parts) {
  return (parts || []).map((p) => (p.content && p.content.$case === 'text' ? p.content.value : '')).join('');
}

function message(value, contextId = '', taskId = '') {
  return {
    messageId: randomUUID(), role: Role.ROLE_USER, contextId, taskId,
    parts: [{ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined, extensions: [], referenceTaskIds: [],
  };
}

function request(msg) {
  return { tenant: '', message: msg, configuration: undefined, metadata: undefined };
}

// stream sends msg and sums up what the stream said.
async function stream(client, msg, onEvent) {
  const out = { states: [], started: [], finished: [], answer: '', taskId: '', contextId: '' };
  for await (const ev of client.sendMessageStream(request(msg))) {
    const p = ev.payload;
    if (!p) continue;
    const v = p.value;
    out.taskId = out.taskId || v.taskId || v.id || '';
    out.contextId = out.contextId || v.contextId || '';
    if (p.$case === 'statusUpdate') {
      out.states.push(TaskState[v.status.state]);
      const meta = v.status.message && v.status.message.metadata && v.status.message.metadata.cadre;
      if (meta && meta.event === 'subagent_started') out.started.push(meta.description);
      if (meta && meta.event === 'subagent_finished') out.finished.push(meta.status);
    } else if (p.$case === 'artifactUpdate') {
      out.answer += text(v.artifact.parts);
    } else if (p.$case === 'task') {
      out.states.push(TaskState[v.status.state]);
    }
    if (onEvent) await onEvent(p, out);
  }
  return out;
}

try {
  let factory = new ClientFactory();
  if (token) {
    const fetchImpl = (url, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('Authorization', 'Bearer ' + token);
      return fetch(url, { ...init, headers });
    };
    factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] });
  }
  const client = await factory.createFromUrl(base);
  const card = await client.getAgentCard();
  report.card = { name: card.name, skills: card.skills.map((s) => s.id), security: Object.keys(card.securitySchemes || {}) };

  // A prompt whose model starts two subagents, streamed.
  report.first = await stream(client, message('MAIN split the job'));

  // The same context continues the session.
  const res = await client.sendMessage(request(message('MAIN again', report.first.contextId)));
  const task = res.payload ? res.payload.value : res;
  report.second = {
    contextId: task.contextId, state: TaskState[task.status.state],
    answer: (task.artifacts || []).map((a) => text(a.parts)).join(''),
  };

  // A run that stalls, canceled once it works.
  let canceled = null;
  report.cancel = await stream(client, message('STALL please'), async (p, out) => {
    if (canceled || p.$case !== 'statusUpdate' || TaskState[p.value.status.state] !== 'TASK_STATE_WORKING') return;
    canceled = await client.cancelTask({ tenant: '', id: out.taskId, metadata: undefined });
  });
  report.cancel.returned = canceled ? TaskState[canceled.status.state] : '';
  const after = await client.getTask({ tenant: '', id: report.cancel.taskId });
  report.cancel.stored = TaskState[after.status.state];
} catch (err) {
  report.errors.push(String(err && err.stack ? err.stack : err));
}
process.stdout.write(JSON.stringify(report) + '\n');
