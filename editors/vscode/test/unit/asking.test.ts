// Asking an agent: which agents a file's pick offers, how each reads, the lines a selection asks about, the agents' status bar item.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentInfo } from '../../src/hub/types';
import { NO_AGENT, activity, agentChoice, agentsIn, agentsOn, agentsStatus, ago, askedLines, linesName, terminalOf } from '../../src/asking/model';

const NOW = new Date('2026-11-21T06:30:00.000Z');

function agent(overrides: Partial<AgentInfo>): AgentInfo {
  return { name: 'claude-1', host: 'claude-code', host_version: '2.1.320', workspace: '/home/ana/shop', since: '2026-11-21T06:00:00.000Z', channel: false, messages_waiting: 0, ...overrides };
}

test("the pick offers the agents whose workspace holds the file, by name", () => {
  const agents = [agent({ name: 'codex-1', host: 'codex-mcp-client' }), agent({}), agent({ name: 'claude-2', workspace: '/home/ana/shopping' }), agent({ name: 'x-1', workspace: undefined })];
  assert.deepEqual(agentsOn(agents, '/home/ana/shop/src/lib.rs').map((a) => a.name), ['claude-1', 'codex-1']);
  assert.deepEqual(agentsOn(agents, '/home/ana/elsewhere/a.rs'), []);
  assert.deepEqual(agentsIn(agents, ['/home/ana/shop/src']).map((a) => a.name), ['codex-1', 'claude-1']);
});

test('an agent reads with its host, what it is doing and how long since its last call', () => {
  assert.equal(ago('2026-11-21T06:29:58.000Z', NOW), 'just now');
  assert.equal(ago('2026-11-21T06:29:20.000Z', NOW), '40 s ago');
  assert.equal(ago('2026-11-21T06:27:00.000Z', NOW), '3 min ago');
  assert.equal(ago('2026-11-21T04:00:00.000Z', NOW), '2 h ago');
  assert.equal(activity(agent({ waiting_in: 'await_review', last_call: 'await_review', last_call_at: '2026-11-21T06:29:00.000Z' }), NOW), 'waiting in await_review');
  assert.equal(activity(agent({ last_call: 'get_feedback', last_call_at: '2026-11-21T06:27:00.000Z' }), NOW), 'last call get_feedback 3 min ago');
  assert.equal(activity(agent({}), NOW), 'no Parley call yet, at work since 30 min ago');
  const busy = agentChoice(agent({ waiting_in: 'await_review', messages_waiting: 2, channel: true }), NOW);
  assert.equal(busy.label, '$(watch) claude-1');
  assert.equal(busy.description, 'claude-code 2.1.320 · takes messages at once');
  assert.equal(busy.detail, 'waiting in await_review · 2 messages waiting for it');
  assert.equal(agentChoice(agent({}), NOW).label, '$(hubot) claude-1');
});

test('a selection asks about whole lines; one ending at the start of a line ends on the line before', () => {
  assert.deepEqual(askedLines({ line: 2, character: 4 }, { line: 4, character: 7 }), { start_line: 2, end_line: 4 });
  assert.deepEqual(askedLines({ line: 2, character: 0 }, { line: 5, character: 0 }), { start_line: 2, end_line: 4 });
  assert.deepEqual(askedLines({ line: 3, character: 2 }, { line: 3, character: 2 }), { start_line: 3, end_line: 3 });
  assert.equal(linesName(2, 4), 'L3-L5');
  assert.equal(linesName(3, 3), 'L4');
});

test('the status bar counts the agents and those waiting; with none, the person is told how to start one', () => {
  const status = agentsStatus([agent({ waiting_in: 'await_review' }), agent({ name: 'codex-1' })]);
  assert.equal(status.text, '$(hubot) 2 agents (1 waiting)');
  assert.match(status.tooltip, /claude-1 \(claude-code\): waiting in await_review/);
  assert.equal(agentsStatus([agent({})]).text, '$(hubot) 1 agent');
  assert.match(NO_AGENT, /no agent is at work/);
  assert.doesNotMatch(NO_AGENT, /agents\/list|agent\/ask/);
});

test("an agent's terminal is the one of this window whose shell is its host or the host's nearest ancestor", () => {
  const here = agent({ editor_id: 'vscode-7', host_pid: 300, host_ancestors: [200, 100, 50] });
  assert.equal(terminalOf(here, 'vscode-7', [undefined, 100, 200]), 2, 'the nearest ancestor wins');
  assert.equal(terminalOf(here, 'vscode-7', [300, 200]), 0, 'a host started as the shell itself');
  assert.equal(terminalOf(here, 'vscode-7', [400, 999]), undefined, 'no terminal of this window runs it');
  assert.equal(terminalOf(here, 'vscode-8', [200]), undefined, "another window's terminal, whatever its process ids");
  assert.equal(terminalOf(agent({ host_pid: 300 }), 'vscode-7', [300]), undefined, 'an agent not started in an editor terminal');
  assert.equal(terminalOf(agent({ editor_id: 'vscode-7' }), 'vscode-7', [undefined]), undefined, 'no ancestry known');
});
