// Whether the window reaches its daemon through a child process (`parley attach --stdio`, docs/protocol.md §1) instead of the socket, and which command line: the user's `parley.attach` setting when set (a workspace's value never counts: it names a program to run), else, for a Windows VS Code whose folder lives in WSL (`\\wsl$\DISTRO\…` or `\\wsl.localhost\DISTRO\…`), `wsl.exe -d DISTRO parley attach --stdio`. Imports nothing from vscode.

import { Inspected } from '../programSettings';

/** How the window reaches its daemon: a child process's stdio, with why (for the log). */
export interface AttachChoice {
  argv: string[];
  why: string;
  /** The WSL distribution the window's folders live in, seen from Windows: paths are rewritten between the two (src/hub/wslPaths.ts). */
  wslDistro?: string;
}

/** The distribution a WSL path lives in (`\\wsl$\Ubuntu\home\me` → `Ubuntu`), or undefined for any other path. */
export function wslDistro(folder: string): string | undefined {
  const match = /^[\\/]{2}(?:wsl\$|wsl\.localhost)[\\/]([^\\/]+)/i.exec(folder);
  return match?.[1];
}

/** The command line a setting value names; throws an Error saying what to write when it is not a list of strings. */
function commandLine(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((part) => typeof part !== 'string')) {
    throw new Error('parley.attach must be a list of strings, the program first, such as ["wsl.exe", "parley", "attach", "--stdio"]');
  }
  if (value.length === 0) return undefined;
  if (value[0].trim() === '') {
    throw new Error('parley.attach names no program: its first item is empty');
  }
  return value as string[];
}

/**
 * The child process to reach the daemon through, or undefined to use the socket.
 * `setting` is what `inspect('attach')` reports; `folders` the window's folders as file-system paths.
 * Throws an Error saying what to fix when the user's setting is malformed.
 */
export function chooseAttach(setting: Inspected<unknown> | undefined, platform: NodeJS.Platform, folders: readonly string[]): AttachChoice | undefined {
  const configured = commandLine(setting?.globalValue);
  const wslFolder = platform === 'win32' ? folders.find((folder) => wslDistro(folder) !== undefined) : undefined;
  const distro = wslFolder === undefined ? undefined : wslDistro(wslFolder);
  if (configured) return { argv: configured, why: 'the parley.attach setting', ...(distro ? { wslDistro: distro } : {}) };
  if (!distro) return undefined;
  return { argv: ['wsl.exe', '-d', distro, 'parley', 'attach', '--stdio'], why: `the folder ${wslFolder} is in WSL (${distro})`, wslDistro: distro };
}
