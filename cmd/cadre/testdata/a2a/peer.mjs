// A remote agent built with @a2a-js/sdk and express, for cadre to use as
// a remote subagent. It prints "listening <url>" once it is up, answers
// "js peer answer: <text>", and with a "SLOW" prompt works until canceled
// (printing "working <task id>" and, on cancel, "canceled <task id>").
//
//   node peer.mjs <required Authorization header value>
import express from 'express';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, AGENT_CARD_PATH } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const [, , auth] = process.argv;
const slow = new Map(); // task id → { release, contextId }

function part(value) {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' };
}

function status(ctx, state, value) {
  return {
    kind: 'statusUpdate',
    data: {
      taskId: ctx.taskId, contextId: ctx.contextId, metadata: undefined,
      status: {
        state, timestamp: new Date().toISOString(),
        message: value === undefined ? undefined : {
          messageId: randomUUID(), role: Role.ROLE_AGENT, contextId: ctx.contextId, taskId: ctx.taskId,
          parts: [part(value)], metadata: undefined, extensions: [], referenceTaskIds: [],
        },
      },
    },
  };
}

const executor = {
  async execute(ctx, bus) {
    const text = ctx.userMessage.parts.map((p) => (p.content && p.content.$case === 'text' ? p.content.value : '')).join('');
    if (!ctx.task) {
      bus.publish({
        kind: 'task',
        data: {
          id: ctx.taskId, contextId: ctx.contextId, artifacts: [], history: [ctx.userMessage], metadata: undefined,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        },
      });
    }
    bus.publish(status(ctx, TaskState.TASK_STATE_WORKING, 'on it'));
    if (text.includes('SLOW')) {
      console.log('working ' + ctx.taskId);
      await new Promise((release) => slow.set(ctx.taskId, { release, contextId: ctx.contextId }));
      bus.finished();
      return;
    }
    bus.publish({
      kind: 'artifactUpdate',
      data: {
        taskId: ctx.taskId, contextId: ctx.contextId, append: false, lastChunk: true, metadata: undefined,
        artifact: { artifactId: randomUUID(), name: 'answer', description: '', parts: [part('js peer answer: ' + text)], metadata: undefined, extensions: [] },
      },
    });
    bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED));
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    console.log('canceled ' + taskId);
    const run = slow.get(taskId);
    bus.publish(status({ taskId, contextId: run ? run.contextId : '' }, TaskState.TASK_STATE_CANCELED));
    if (run) run.release();
  },
};

const app = express();
let url = '';
const card = () => ({
  name: 'js-peer', description: 'An A2A agent built with @a2a-js/sdk', version: '1.0.0',
  supportedInterfaces: [{ url: url + '/rpc', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [], securitySchemes: {}, securityRequirements: [], signatures: [],
});
const handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor);
app.use((req, res, next) => {
  if (req.path !== '/' + AGENT_CARD_PATH && req.path !== AGENT_CARD_PATH && req.get('authorization') !== auth) {
    res.status(401).json({ error: 'want the Authorization header' });
    return;
  }
  next();
});
app.use('/' + AGENT_CARD_PATH.replace(/^\//, ''), agentCardHandler({ agentCardProvider: async () => card() }));
app.use('/rpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const server = app.listen(0, '127.0.0.1', () => {
  url = 'http://127.0.0.1:' + server.address().port;
  console.log('listening ' + url);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
