// Asking a chosen agent about lines of code: the agents at work (agents/list once per connection, then agents/changed) in a status bar item, "Ask Agent About This…" (a pick of the agents on the file's repository, the question, then agent/ask; the new thread shows at once with where the question stands), "Send to Another Agent…" for a message waiting for an agent that has gone (agent/resend), and "Type into the Agent's Terminal…" for a message waiting for an agent that runs in one of this window's terminals (shown exactly, typed only once the person confirms: agent/typed).

import * as vscode from 'vscode';
import { authorName } from '../author';
import { HubClient } from '../hub/client';
import { AgentAskParams, AgentAskResult, AgentInfo, AgentResendParams, AgentsChanged, AgentsListParams, AgentsListResult, AgentTypedParams, AgentTypedResult } from '../hub/types';
import { Log } from '../log';
import { ThreadsController } from '../threads/controller';
import { newestDelivery } from '../threads/model';
import { NO_AGENT, agentChoice, agentsIn, agentsOn, agentsStatus, askedLines, linesName, terminalOf } from './model';

export class AskingController implements vscode.Disposable {
  private agents: AgentInfo[] = [];
  private readonly status: vscode.StatusBarItem;
  private readonly watching: vscode.Disposable[];
  /** Counts the looks at this window's terminals, so that only the newest one says which agents run there. */
  private looks = 0;

  constructor(
    private readonly hub: HubClient,
    private readonly log: Log,
    private readonly threads: ThreadsController,
    private readonly folders: () => string[],
    private readonly editorId: string,
  ) {
    this.status = vscode.window.createStatusBarItem('parley.agents', vscode.StatusBarAlignment.Left, 48);
    this.status.name = 'Parley agents at work';
    this.status.command = 'parley.showAgents';
    this.watching = [
      vscode.window.onDidOpenTerminal(() => void this.lookAtTerminals()),
      vscode.window.onDidCloseTerminal(() => void this.lookAtTerminals()),
    ];
  }

  /** This window's terminal that runs `agent`, if one does. */
  private async terminalOf(agent: AgentInfo): Promise<vscode.Terminal | undefined> {
    const terminals = [...vscode.window.terminals];
    const shells = await Promise.all(terminals.map((t) => Promise.resolve(t.processId).then((pid) => pid, () => undefined)));
    const index = terminalOf(agent, this.editorId, shells);
    return index === undefined ? undefined : terminals[index];
  }

  /** Which agents run in this window's terminals: their threads offer to type a waiting message there. */
  private async lookAtTerminals(): Promise<void> {
    const look = ++this.looks;
    const found = await Promise.all(this.agents.map(async (a) => ((await this.terminalOf(a)) ? a.name : undefined)));
    if (look !== this.looks) return;
    const names = found.filter((n): n is string => n !== undefined);
    this.threads.setAgentsTypeable(names);
    void vscode.commands.executeCommand('setContext', 'parley.agentInTerminal', names.length > 0);
    this.log.trace('agents in terminals', { names });
  }

  /** After each hello: the agents at work (which also asks the daemon for agents/changed). */
  async onConnected(): Promise<void> {
    const { agents } = await this.hub.request<AgentsListResult>('agents/list', {} satisfies AgentsListParams);
    this.set(agents);
  }

  /** agents/changed: every agent at work now. */
  onChanged(params: AgentsChanged): void {
    this.set(params.agents);
  }

  private set(agents: AgentInfo[]): void {
    this.agents = agents;
    this.threads.setAgentsAtWork(agents.map((a) => a.name));
    void this.lookAtTerminals();
    const mine = agentsIn(agents, this.folders());
    this.log.trace('agents', { names: mine.map((a) => a.name), waiting: mine.filter((a) => a.waiting_in).map((a) => a.name) });
    if (mine.length === 0) {
      this.status.hide();
      return;
    }
    const { text, tooltip } = agentsStatus(mine);
    this.status.text = text;
    this.status.tooltip = tooltip;
    this.status.show();
  }

  /** A pick of `agents`; undefined when the person dismissed it. */
  private async pickAgent(agents: AgentInfo[], title: string, placeHolder: string): Promise<AgentInfo | undefined> {
    const now = new Date();
    const picked = await vscode.window.showQuickPick(
      agents.map((a) => agentChoice(a, now)),
      { title, placeHolder, matchOnDescription: true, matchOnDetail: true, ignoreFocusOut: true },
    );
    return picked?.agent;
  }

  /** Parley: Show Agents at Work: the agents on this window's folders; choosing one does nothing more. */
  async showAgents(): Promise<void> {
    const mine = agentsIn(this.agents, this.folders());
    if (mine.length === 0) {
      void vscode.window.showInformationMessage(NO_AGENT);
      return;
    }
    await this.pickAgent(mine, `Agents at work (${mine.length})`, 'The agents on this window\'s folders');
  }

  /** Parley: Ask Agent About This…: the selection (or the cursor's line), a chosen agent, the question. */
  async ask(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== 'file') {
      void vscode.window.showWarningMessage('Parley: open a file of your workspace and select the lines to ask about');
      return;
    }
    const file = editor.document.uri.fsPath;
    const lines = askedLines(editor.selection.start, editor.selection.end);
    const where = `${vscode.workspace.asRelativePath(editor.document.uri)}:${linesName(lines.start_line, lines.end_line)}`;
    const candidates = agentsOn(this.agents, file);
    if (candidates.length === 0) {
      void vscode.window.showInformationMessage(NO_AGENT);
      return;
    }
    // Even a lone agent is confirmed: the person must know who gets the question.
    const agent = await this.pickAgent(candidates, `Ask about ${where}`, candidates.length === 1 ? 'The agent at work on this repository' : 'Which agent?');
    if (!agent) return;
    const message = await vscode.window.showInputBox({ title: `Ask ${agent.name} about ${where}`, prompt: 'Your question; it becomes a thread on these lines', placeHolder: 'Why is this here?', ignoreFocusOut: true });
    if (message === undefined || message.trim() === '') return;
    const params: AgentAskParams = { agent: agent.name, path: file, ...lines, message: message.trim(), author: authorName() };
    try {
      const result = await this.hub.request<AgentAskResult>('agent/ask', params);
      this.threads.showMine(result.thread, editor.document.isDirty ? new vscode.Range(lines.start_line, 0, lines.end_line, editor.document.lineAt(lines.end_line).text.length) : undefined);
      this.log.info(`asked ${result.agent} about ${where} in thread ${result.thread.id}: ${result.delivery.state}`);
      this.log.trace('asked', { agent: result.agent, thread: result.thread.id, state: result.delivery.state });
    } catch (error) {
      void vscode.window.showErrorMessage(`Parley: asking ${agent.name} failed: ${(error as Error).message}`);
    }
  }

  /** Send to Another Agent…: the thread's waiting message goes to an agent at work. */
  async resend(args: unknown): Promise<void> {
    const thread = this.threads.threadFor(args);
    if (!thread) {
      void vscode.window.showInformationMessage('Parley: put the cursor in a thread whose message waits for an agent, then send it again');
      return;
    }
    const newest = newestDelivery(thread);
    if (!newest || newest.state !== 'waiting') {
      void vscode.window.showInformationMessage('Parley: no message of this thread waits for an agent');
      return;
    }
    const candidates = agentsOn(this.agents, thread.file).filter((a) => a.name !== newest.agent);
    if (candidates.length === 0) {
      void vscode.window.showInformationMessage(NO_AGENT);
      return;
    }
    const agent = await this.pickAgent(candidates, `Send to another agent (${newest.agent} has it now)`, 'Which agent?');
    if (!agent) return;
    try {
      const result = await this.hub.request<AgentAskResult>('agent/resend', { thread_id: thread.id, agent: agent.name } satisfies AgentResendParams);
      this.threads.showMine(result.thread);
      this.log.info(`sent thread ${thread.id} to ${result.agent} instead of ${newest.agent}`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Parley: sending to ${agent.name} failed: ${(error as Error).message}`);
    }
  }

  /** Type into the Agent's Terminal…: the thread's waiting message, shown exactly, typed into the terminal its agent runs in once the person confirms. */
  async typeIntoTerminal(args: unknown): Promise<void> {
    const thread = this.threads.threadFor(args);
    if (!thread) {
      void vscode.window.showInformationMessage("Parley: put the cursor in a thread whose message waits for an agent, then type it into the agent's terminal");
      return;
    }
    const newest = newestDelivery(thread);
    if (!newest || newest.state !== 'waiting') {
      void vscode.window.showInformationMessage('Parley: no message of this thread waits for an agent');
      return;
    }
    const agent = this.agents.find((a) => a.name === newest.agent);
    if (!agent) {
      void vscode.window.showInformationMessage(`Parley: ${newest.agent} is no longer at work: send the message to another agent`);
      return;
    }
    const terminal = await this.terminalOf(agent);
    if (!terminal) {
      void vscode.window.showInformationMessage(`Parley: ${agent.name} does not run in a terminal of this window; it gets the message with its next Parley tool answer or through its host's hooks`);
      return;
    }
    try {
      const preview = await this.hub.request<AgentTypedResult>('agent/typed', { thread_id: thread.id, preview: true } satisfies AgentTypedParams);
      const button = `Type into ${agent.name}'s Terminal`;
      const choice = await vscode.window.showWarningMessage(
        `Type this into ${agent.name}'s terminal (${terminal.name}) and press Enter?`,
        { modal: true, detail: preview.text },
        button,
      );
      if (choice !== button) return;
      const typed = await this.hub.request<AgentTypedResult>('agent/typed', { thread_id: thread.id } satisfies AgentTypedParams);
      terminal.show(false);
      terminal.sendText(typed.text, true);
      this.threads.showMine(typed.thread);
      this.log.info(`typed thread ${thread.id}'s message into ${typed.agent}'s terminal (${terminal.name})`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Parley: typing into ${agent.name}'s terminal failed: ${(error as Error).message}`);
    }
  }

  dispose(): void {
    this.status.dispose();
    for (const d of this.watching) d.dispose();
  }
}
