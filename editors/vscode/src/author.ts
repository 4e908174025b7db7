// The name a person's comments and reviews are signed with: the `parley.author` setting, else the login name.

import * as os from 'node:os';
import * as vscode from 'vscode';

export function authorName(): string {
  const configured = vscode.workspace.getConfiguration('parley').get<string>('author', '');
  if (configured.trim() !== '') return configured.trim();
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? 'vscode';
  }
}
