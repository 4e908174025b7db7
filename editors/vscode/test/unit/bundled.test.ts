// The programs a per-platform extension package carries in bin/, and what the user is told when the running daemon is another install's.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { bundledProgram, versionNotice } from '../../src/bundled';
import { programSetting } from '../../src/programSettings';

test('the bundled parley and parley-mcp are found in bin/, and only when they can be run', () => {
  const extension = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-ext-'));
  try {
    assert.equal(bundledProgram(extension, 'parley', 'linux'), undefined, 'a package without bin/ carries nothing');
    fs.mkdirSync(path.join(extension, 'bin'));
    fs.writeFileSync(path.join(extension, 'bin', 'parley'), '#!/bin/sh\n', { mode: 0o644 });
    assert.equal(bundledProgram(extension, 'parley', 'linux'), undefined, 'a file that cannot be run is not used');
    fs.chmodSync(path.join(extension, 'bin', 'parley'), 0o755);
    assert.equal(bundledProgram(extension, 'parley', 'linux'), path.join(extension, 'bin', 'parley'));
    assert.equal(bundledProgram(extension, 'parley-mcp', 'linux'), undefined);
    fs.writeFileSync(path.join(extension, 'bin', 'parley-mcp.exe'), '');
    assert.equal(bundledProgram(extension, 'parley-mcp', 'win32'), path.join(extension, 'bin', 'parley-mcp.exe'));
    // The user's setting wins over the bundled program, which wins over PATH.
    const bundled = bundledProgram(extension, 'parley', 'linux') ?? 'parley';
    assert.equal(programSetting({ defaultValue: '' }, bundled), bundled);
    assert.equal(programSetting({ defaultValue: '', globalValue: '/opt/parley' }, bundled), '/opt/parley');
  } finally {
    fs.rmSync(extension, { recursive: true, force: true });
  }
});

test('package.json leaves both program settings empty, so the bundled programs are the default', () => {
  const manifest = JSON.parse(fs.readFileSync('package.json', 'utf8'));
  const properties = manifest.contributes.configuration.properties;
  for (const name of ['parley.executable', 'parley.mcpExecutable']) assert.equal(properties[name].default, '', name);
});

test('the user is told when the running daemon is not the version the extension carries', () => {
  assert.equal(versionNotice('0.1.0', '0.1.0', '/usr/bin/parley'), undefined);
  const notice = versionNotice('0.0.9', '0.1.0', '/home/me/.cargo/bin/parley');
  assert.match(notice ?? '', /version 0\.0\.9 \(\/home\/me\/\.cargo\/bin\/parley\), not the 0\.1\.0 this extension carries/);
});
