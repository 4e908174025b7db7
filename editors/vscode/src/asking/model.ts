// The pure part of asking an agent: which agents work on a file, how each reads in a pick (name, host, what it is doing, how long since its last call), the lines a selection asks about, and the words of the agents' status bar item. Imports nothing from vscode.

import { AgentInfo } from '../hub/types';

/** The processes whose terminal runs `agent`: its host and the host's ancestors, nearest first. */
export function hostChain(agent: AgentInfo): number[] {
  return [...(agent.host_pid !== undefined ? [agent.host_pid] : []), ...(agent.host_ancestors ?? [])];
}

/**
 * Which of `shells` (this window's terminals' shell process ids, undefined when not known) runs `agent`: only when the agent
 * says it runs in this window (`editorId`), the first terminal whose shell is its host or nearest to it. Undefined when none.
 */
export function terminalOf(agent: AgentInfo, editorId: string, shells: readonly (number | undefined)[]): number | undefined {
  if (agent.editor_id !== editorId) return undefined;
  for (const pid of hostChain(agent)) {
    const index = shells.indexOf(pid);
    if (index >= 0) return index;
  }
  return undefined;
}

/** Whether `folder` holds `file` (or is it). */
function holds(folder: string, file: string): boolean {
  return file === folder || file.startsWith(folder.endsWith('/') ? folder : `${folder}/`);
}

/** The agents whose workspace holds `file`, by name. */
export function agentsOn(agents: readonly AgentInfo[], file: string): AgentInfo[] {
  return agents.filter((a) => a.workspace !== undefined && holds(a.workspace, file)).sort((a, b) => a.name.localeCompare(b.name));
}

/** The agents working in or under one of `folders` (every agent when the window has no folder). */
export function agentsIn(agents: readonly AgentInfo[], folders: readonly string[]): AgentInfo[] {
  if (folders.length === 0) return [...agents];
  return agents.filter((a) => a.workspace !== undefined && folders.some((f) => holds(f, a.workspace as string) || holds(a.workspace as string, f)));
}

/** How long ago `iso` was, as a person says it: `just now`, `40 s ago`, `3 min ago`, `2 h ago`, `3 days ago`. */
export function ago(iso: string, now: Date): string {
  const seconds = Math.max(0, Math.round((now.getTime() - new Date(iso).getTime()) / 1000));
  if (!Number.isFinite(seconds)) return 'at an unknown time';
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  const days = Math.floor(seconds / 86400);
  return days === 1 ? '1 day ago' : `${days} days ago`;
}

/** What an agent is doing: `waiting in await_review`, `last call get_feedback 3 min ago`, or `no Parley call yet`. */
export function activity(agent: AgentInfo, now: Date): string {
  if (agent.waiting_in) return `waiting in ${agent.waiting_in}`;
  if (agent.last_call && agent.last_call_at) return `last call ${agent.last_call} ${ago(agent.last_call_at, now)}`;
  return `no Parley call yet, at work since ${ago(agent.since, now)}`;
}

export interface AgentChoice {
  label: string;
  description: string;
  detail: string;
  agent: AgentInfo;
}

/** An agent as the pick shows it: its name, its host, and what it is doing. */
export function agentChoice(agent: AgentInfo, now: Date): AgentChoice {
  const waiting = agent.messages_waiting > 0 ? ` · ${agent.messages_waiting === 1 ? '1 message' : `${agent.messages_waiting} messages`} waiting for it` : '';
  return {
    label: agent.waiting_in ? `$(watch) ${agent.name}` : `$(hubot) ${agent.name}`,
    description: `${agent.host}${agent.host_version ? ` ${agent.host_version}` : ''}${agent.channel ? ' · takes messages at once' : ''}`,
    detail: `${activity(agent, now)}${waiting}`,
    agent,
  };
}

/** The lines (0-based, inclusive) a selection asks about: a selection ending at the start of a line ends on the line before. */
export function askedLines(start: { line: number; character: number }, end: { line: number; character: number }): { start_line: number; end_line: number } {
  const last = end.line > start.line && end.character === 0 ? end.line - 1 : end.line;
  return { start_line: start.line, end_line: Math.max(start.line, last) };
}

/** `L3` or `L3-L5`, 1-based, as the pick's title names the lines. */
export function linesName(startLine: number, endLine: number): string {
  return endLine > startLine ? `L${startLine + 1}-L${endLine + 1}` : `L${startLine + 1}`;
}

/** What a person is told when no agent works on the file: how to start one. */
export const NO_AGENT =
  'Parley: no agent is at work on this repository. Start one here (Claude Code, Codex or another MCP host) with parley-mcp as its MCP server (`parley mcp-config HOST --write` sets it up), then ask again.';

/** The status bar item's words: `$(hubot) 2 agents` (with how many wait in a Parley call). */
export function agentsStatus(agents: readonly AgentInfo[]): { text: string; tooltip: string } {
  const waiting = agents.filter((a) => a.waiting_in).length;
  const count = agents.length === 1 ? '1 agent' : `${agents.length} agents`;
  const text = `$(hubot) ${count}${waiting > 0 ? ` (${waiting} waiting)` : ''}`;
  const now = new Date();
  const lines = agents.map((a) => `${a.name} (${a.host}): ${activity(a, now)}`);
  return { text, tooltip: `Agents at work on this window's folders:\n${lines.join('\n')}\nClick to list them.` };
}
