// Paths between a Windows VS Code and its daemon in WSL: only absolute paths under path members are rewritten, each way.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseAttach } from '../../src/hub/attachCommand';
import { linuxPath, windowsPath, wslMapping } from '../../src/hub/wslPaths';

test('a WSL share path and its Linux path, both ways', () => {
  assert.equal(linuxPath('\\\\wsl.localhost\\Ubuntu\\home\\me\\app', 'Ubuntu'), '/home/me/app');
  assert.equal(linuxPath('\\\\wsl$\\ubuntu\\home\\me', 'Ubuntu'), '/home/me');
  assert.equal(linuxPath('\\\\wsl$\\Ubuntu', 'Ubuntu'), '/');
  assert.equal(linuxPath('\\\\wsl$\\Debian\\srv', 'Ubuntu'), undefined, "another distribution's path is not this daemon's");
  assert.equal(linuxPath('C:\\Users\\me', 'Ubuntu'), undefined);
  assert.equal(windowsPath('/home/me/app', 'Ubuntu'), '\\\\wsl.localhost\\Ubuntu\\home\\me\\app');
});

test("a hello and a thread's paths are rewritten, text and relative paths are not", () => {
  const mapping = wslMapping('Ubuntu');
  const hello = { role: 'editor', cwd: '\\\\wsl$\\Ubuntu\\home\\me', workspaces: ['\\\\wsl.localhost\\Ubuntu\\home\\me\\app', 'C:\\tools'] };
  assert.deepEqual(mapping.toDaemon(hello), { role: 'editor', cwd: '/home/me', workspaces: ['/home/me/app', 'C:\\tools'] });
  const create = { path: '\\\\wsl.localhost\\Ubuntu\\home\\me\\app\\src\\lib.rs', body: 'see \\\\wsl.localhost\\Ubuntu\\etc', text: 'x' };
  assert.deepEqual(mapping.toDaemon(create), { path: '/home/me/app/src/lib.rs', body: 'see \\\\wsl.localhost\\Ubuntu\\etc', text: 'x' });
  const changed = { seq: 3, thread: { workspace: '/home/me/app', path: 'src/lib.rs', file: '/home/me/app/src/lib.rs', quote: '/etc/passwd', comments: [{ body: '/home/me' }] } };
  assert.deepEqual(mapping.toWindow(changed), {
    seq: 3,
    thread: { workspace: '\\\\wsl.localhost\\Ubuntu\\home\\me\\app', path: 'src/lib.rs', file: '\\\\wsl.localhost\\Ubuntu\\home\\me\\app\\src\\lib.rs', quote: '/etc/passwd', comments: [{ body: '/home/me' }] },
  });
  const review = { review: { base_uri: '/home/me/app', references: [{ path: 'src/lib.rs', resolved_path: '/home/me/app/src/lib.rs' }] } };
  assert.deepEqual(mapping.toWindow(review), {
    review: { base_uri: '\\\\wsl.localhost\\Ubuntu\\home\\me\\app', references: [{ path: 'src/lib.rs', resolved_path: '\\\\wsl.localhost\\Ubuntu\\home\\me\\app\\src\\lib.rs' }] },
  });
  assert.equal(mapping.toWindow(null), null);
});

test('the attach choice names the WSL distribution, also when the setting names the command', () => {
  assert.equal(chooseAttach(undefined, 'win32', ['\\\\wsl$\\Ubuntu\\home\\me'])?.wslDistro, 'Ubuntu');
  assert.equal(chooseAttach({ globalValue: ['wsl.exe', '-d', 'Ubuntu', '-e', 'parley', 'attach', '--stdio'] }, 'win32', ['\\\\wsl$\\Ubuntu\\home\\me'])?.wslDistro, 'Ubuntu');
  assert.equal(chooseAttach({ globalValue: ['/opt/parley', 'attach', '--stdio'] }, 'linux', ['/home/me'])?.wslDistro, undefined);
});
