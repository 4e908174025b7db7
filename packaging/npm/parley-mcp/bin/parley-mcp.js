#!/usr/bin/env node
// Runs the prebuilt parley-mcp of this platform's package (parley-mcp-linux-x64
// and so on, installed by npm as an optional dependency that matches os and
// cpu), passing standard input and output through and returning its exit code.
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');

const platform = `${process.platform}-${process.arch}`;
const pkg = `parley-mcp-${platform}`;
const exe = process.platform === 'win32' ? 'parley-mcp.exe' : 'parley-mcp';

let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'bin', exe);
} catch {
  const known = Object.keys(require('../package.json').optionalDependencies || {}).map((name) => name.replace('parley-mcp-', ''));
  process.stderr.write(
    `parley-mcp: no prebuilt parley-mcp for ${platform} (the package ${pkg} is not installed); ` +
      `prebuilt platforms: ${known.join(', ')}. Reinstall without --no-optional, or install Parley with ` +
      '`cargo install --locked parley-daemon parley-shim`\n',
  );
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => child.kill(signal));
}
child.on('error', (error) => {
  process.stderr.write(`parley-mcp: could not run ${binary}: ${error.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
