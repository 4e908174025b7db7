// Agents in this window: terminals opened here get PARLEY_EDITOR_ID, so an agent started in one asks this window for the selection; and parley-mcp is offered to VS Code's own agent (Copilot agent mode) as an MCP server.

import * as vscode from 'vscode';
import { bundledProgram } from './bundled';
import { Log } from './log';
import { ignoredWorkspaceValue, programSetting } from './programSettings';

/** Sets PARLEY_EDITOR_ID (and the socket, when the window was told one) in every terminal this window opens. */
export function exportToTerminals(context: vscode.ExtensionContext, editorId: string): void {
  const collection = context.environmentVariableCollection;
  // The id is new with each extension host, so terminals restored from an earlier session must not keep an old one.
  collection.persistent = false;
  collection.description = 'Parley: routes agents started in this terminal to this window';
  collection.replace('PARLEY_EDITOR_ID', editorId);
  const socket = process.env.PARLEY_SOCKET;
  if (socket !== undefined && socket !== '') collection.replace('PARLEY_SOCKET', socket);
}

/** Registers parley-mcp with VS Code's MCP support, where this VS Code has it. */
export function offerMcpServer(context: vscode.ExtensionContext, editorId: string, version: string, log: Log): void {
  const lm = vscode.lm as typeof vscode.lm | undefined;
  if (!lm || typeof lm.registerMcpServerDefinitionProvider !== 'function' || typeof vscode.McpStdioServerDefinition !== 'function') {
    log.info('this VS Code has no MCP server API; add parley-mcp to your agent by hand (see the README)');
    return;
  }
  const changed = new vscode.EventEmitter<void>();
  context.subscriptions.push(
    changed,
    lm.registerMcpServerDefinitionProvider('parley.mcp', {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: () => {
        const inspected = vscode.workspace.getConfiguration('parley').inspect<string>('mcpExecutable');
        const ignored = ignoredWorkspaceValue(inspected);
        if (ignored !== undefined) log.info(`ignoring parley.mcpExecutable = ${JSON.stringify(ignored)} from the workspace's settings: set it in your user settings`);
        // The shim this extension carries when it carries one: VS Code's agent then needs nothing installed.
        const command = programSetting(inspected, bundledProgram(context.extensionPath, 'parley-mcp') ?? 'parley-mcp');
        const env: Record<string, string> = { PARLEY_EDITOR_ID: editorId };
        const socket = process.env.PARLEY_SOCKET;
        if (socket !== undefined && socket !== '') env.PARLEY_SOCKET = socket;
        return [new vscode.McpStdioServerDefinition('Parley', command, [], env, version)];
      },
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('parley.mcpExecutable')) changed.fire();
    }),
  );
  const offered = programSetting(vscode.workspace.getConfiguration('parley').inspect<string>('mcpExecutable'), bundledProgram(context.extensionPath, 'parley-mcp') ?? 'parley-mcp');
  log.info(`offered ${offered} to VS Code agents as the MCP server "Parley"`);
  log.trace('mcp-offered', { command: offered });
}
