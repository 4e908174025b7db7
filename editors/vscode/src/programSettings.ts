// The settings that name a program to run, `parley.executable` (the CLI that starts the daemon) and `parley.mcpExecutable` (the shim offered to VS Code's agents): read from the user's own settings only, never from a workspace's `.vscode/settings.json`, which a cloned repository controls. package.json declares both `"scope": "machine"`, which makes VS Code ignore a workspace's value; this reads them the same way whatever VS Code does, and says when a workspace tried. Imports nothing from vscode.

/** What `WorkspaceConfiguration.inspect` reports for a setting: its value at each level. */
export interface Inspected<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** The program a setting names: the user's value, else the default, else `fallback`; a workspace's value never counts. */
export function programSetting(inspected: Inspected<string> | undefined, fallback: string): string {
  for (const value of [inspected?.globalValue, inspected?.defaultValue]) {
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return fallback;
}

/** The value a workspace (or one of its folders) set and that was ignored, to say so in the log. */
export function ignoredWorkspaceValue(inspected: Inspected<string> | undefined): string | undefined {
  return inspected?.workspaceFolderValue ?? inspected?.workspaceValue;
}
