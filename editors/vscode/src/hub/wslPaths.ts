// Paths between a Windows VS Code and a daemon in WSL: the window knows a WSL folder as `\\wsl.localhost\DISTRO\home\me\app` (or `\\wsl$\DISTRO\…`), the daemon as `/home/me/app`. Messages through `wsl.exe parley attach --stdio` are rewritten at the edge, field by field: only the members that carry paths, and only absolute paths, so relative paths, text and everything else pass unchanged. Imports nothing from vscode.

/** The members of hub messages (and their parameters and results) that carry file-system paths. */
const PATH_KEYS = new Set(['cwd', 'workspaces', 'workspace', 'base_uri', 'path', 'file', 'resolved_path', 'root', 'repository', 'old_path']);

/** Rewrites the paths of one message each way. */
export interface PathMapping {
  /** Window → daemon: `\\wsl.localhost\DISTRO\a\b` → `/a/b`. */
  toDaemon(value: unknown): unknown;
  /** Daemon → window: `/a/b` → `\\wsl.localhost\DISTRO\a\b`. */
  toWindow(value: unknown): unknown;
}

/** The Linux path a WSL share path names in `distro`, or undefined when it is not one of that distribution's. */
export function linuxPath(windowsPath: string, distro: string): string | undefined {
  const match = /^[\\/]{2}(?:wsl\$|wsl\.localhost)[\\/]([^\\/]+)(.*)$/i.exec(windowsPath);
  if (!match || match[1].toLowerCase() !== distro.toLowerCase()) return undefined;
  const rest = match[2].replace(/\\/g, '/');
  return rest === '' ? '/' : rest;
}

/** The WSL share path of a Linux absolute path in `distro`. */
export function windowsPath(linux: string, distro: string): string {
  return `\\\\wsl.localhost\\${distro}${linux.replace(/\//g, '\\')}`.replace(/\\$/, '');
}

/** Applies `map` to every string under a path member, at any depth. */
function rewrite(value: unknown, map: (path: string) => string, underPathKey = false): unknown {
  if (typeof value === 'string') return underPathKey ? map(value) : value;
  if (Array.isArray(value)) return value.map((item) => rewrite(item, map, underPathKey));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = rewrite(item, map, PATH_KEYS.has(key));
    return out;
  }
  return value;
}

/** The mapping for a window whose folders live in WSL's `distro`. */
export function wslMapping(distro: string): PathMapping {
  return {
    toDaemon: (value) => rewrite(value, (path) => linuxPath(path, distro) ?? path),
    toWindow: (value) => rewrite(value, (path) => (path.startsWith('/') ? windowsPath(path, distro) : path)),
  };
}
