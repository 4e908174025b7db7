// Which way a window reaches its daemon: the socket, the user's parley.attach command, or wsl.exe for a Windows window on a WSL folder.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { chooseAttach, wslDistro } from '../../src/hub/attachCommand';

const DEFAULT = { defaultValue: [] as string[] };

test('the socket unless something says otherwise', () => {
  assert.equal(chooseAttach(DEFAULT, 'linux', ['/home/me/app']), undefined);
  assert.equal(chooseAttach(undefined, 'win32', ['C:\\Users\\me\\app']), undefined);
  assert.equal(chooseAttach({ ...DEFAULT, globalValue: [] }, 'darwin', ['/Users/me/app']), undefined);
});

test("the user's setting is the command line, on any platform", () => {
  const argv = ['/opt/parley/parley', 'attach', '--stdio'];
  assert.deepEqual(chooseAttach({ ...DEFAULT, globalValue: argv }, 'linux', ['/home/me/app'])?.argv, argv);
  const wsl = ['wsl.exe', '-d', 'Debian', 'parley', 'attach', '--stdio'];
  // It wins over detection.
  assert.deepEqual(chooseAttach({ ...DEFAULT, globalValue: wsl }, 'win32', ['\\\\wsl$\\Ubuntu\\home\\me'])?.argv, wsl);
});

test("a workspace's value never chooses a program", () => {
  const hostile = { ...DEFAULT, workspaceValue: ['./evil.sh'], workspaceFolderValue: ['/tmp/evil'] };
  assert.equal(chooseAttach(hostile, 'linux', ['/home/me/app']), undefined);
});

test('a malformed setting says what to write', () => {
  assert.throws(() => chooseAttach({ globalValue: 'wsl.exe parley attach --stdio' }, 'win32', []), /must be a list of strings, the program first/);
  assert.throws(() => chooseAttach({ globalValue: ['wsl.exe', 3] }, 'win32', []), /must be a list of strings/);
  assert.throws(() => chooseAttach({ globalValue: [' ', 'attach'] }, 'linux', []), /names no program/);
});

test('a Windows window on a WSL folder goes through wsl.exe to that distribution', () => {
  for (const folder of ['\\\\wsl$\\Ubuntu-22.04\\home\\me\\app', '\\\\wsl.localhost\\Ubuntu-22.04\\home\\me\\app', '//wsl.localhost/Ubuntu-22.04/home/me']) {
    const choice = chooseAttach(DEFAULT, 'win32', [folder]);
    assert.deepEqual(choice?.argv, ['wsl.exe', '-d', 'Ubuntu-22.04', 'parley', 'attach', '--stdio'], folder);
    assert.match(choice?.why ?? '', /in WSL \(Ubuntu-22\.04\)/);
  }
  // The first WSL folder decides, after Windows ones.
  assert.deepEqual(chooseAttach(DEFAULT, 'win32', ['C:\\src\\tool', '\\\\WSL$\\Debian\\srv'])?.argv.slice(0, 3), ['wsl.exe', '-d', 'Debian']);
  // The same path opened elsewhere is not Windows's WSL share.
  assert.equal(chooseAttach(DEFAULT, 'linux', ['\\\\wsl$\\Ubuntu\\home']), undefined);
});

test('only WSL shares name a distribution', () => {
  assert.equal(wslDistro('\\\\wsl$\\Ubuntu'), 'Ubuntu');
  assert.equal(wslDistro('\\\\server\\share\\wsl$'), undefined);
  assert.equal(wslDistro('C:\\wsl$\\Ubuntu'), undefined);
  assert.equal(wslDistro('\\\\wsl.localhost\\'), undefined);
});

test('package.json declares parley.attach machine-scoped, and the extension runs where the files are', () => {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
  const attach = manifest.contributes.configuration.properties['parley.attach'];
  assert.equal(attach.scope, 'machine');
  assert.equal(attach.type, 'array');
  assert.deepEqual(manifest.extensionKind, ['workspace']);
});
