// The settings naming programs the extension runs: a workspace's own settings (a cloned repository's .vscode/settings.json) can never choose them.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ignoredWorkspaceValue, programSetting } from '../../src/programSettings';

test('a workspace value is ignored and reported; the user value or the default counts', () => {
  const hostile = { defaultValue: 'parley', workspaceValue: './evil.sh', workspaceFolderValue: '/tmp/evil' };
  assert.equal(programSetting(hostile, 'parley'), 'parley');
  assert.equal(ignoredWorkspaceValue(hostile), '/tmp/evil');
  assert.equal(programSetting({ ...hostile, globalValue: '/opt/parley/bin/parley' }, 'parley'), '/opt/parley/bin/parley');
  assert.equal(programSetting({ defaultValue: 'parley-mcp', globalValue: '  ' }, 'parley-mcp'), 'parley-mcp');
  assert.equal(programSetting(undefined, 'parley'), 'parley');
  assert.equal(ignoredWorkspaceValue({ defaultValue: 'parley', globalValue: 'x' }), undefined);
});

test('package.json declares both program settings machine-scoped, so VS Code ignores a workspace value too', () => {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
  const properties = manifest.contributes.configuration.properties;
  for (const name of ['parley.executable', 'parley.mcpExecutable']) {
    assert.equal(properties[name].scope, 'machine', name);
  }
});

test('packaging the standard way (vsce package) builds the extension first', () => {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
  assert.equal(manifest.scripts['vscode:prepublish'], 'node build.mjs');
});
