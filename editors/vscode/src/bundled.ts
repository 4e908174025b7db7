// The `parley` and `parley-mcp` this extension carries: the per-platform packages scripts/package builds (`vsce package --target linux-x64` and so on) hold them in bin/, and the extension runs them unless the user's `parley.executable` or `parley.mcpExecutable` names others. A package built without them (a plain `vsce package`) has none, and the programs are looked up on PATH. Imports nothing from vscode.

import * as fs from 'node:fs';
import * as path from 'node:path';

/** The bundled program `name` under `extensionPath`, when this package carries it (and it can be run). */
export function bundledProgram(extensionPath: string, name: 'parley' | 'parley-mcp', platform: string = process.platform): string | undefined {
  const file = path.join(extensionPath, 'bin', platform === 'win32' ? `${name}.exe` : name);
  try {
    fs.accessSync(file, platform === 'win32' ? fs.constants.R_OK : fs.constants.X_OK);
    return file;
  } catch {
    return undefined;
  }
}

/**
 * What to tell the user when the daemon this window connected to is not the version the extension carries (a `parley`
 * from another install, already running or started from PATH): undefined when they match. The protocol is the same,
 * or the daemon would have refused the hello.
 */
export function versionNotice(daemonVersion: string, carriedVersion: string, daemonExecutable: string | undefined): string | undefined {
  if (daemonVersion === carriedVersion) return undefined;
  const from = daemonExecutable ? ` (${daemonExecutable})` : '';
  return `Parley: connected to a running daemon of version ${daemonVersion}${from}, not the ${carriedVersion} this extension carries; they speak the same protocol. Run \`parley stop\` and reconnect to use the extension's own.`;
}
