// The socket path computed as protocol::socket::socket_path does, for when `parley` is not on PATH.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computeSocketPath, spawnForbidden } from '../../src/hub/socketPath';

test('PARLEY_SOCKET wins, and must be absolute', () => {
  assert.equal(computeSocketPath({ PARLEY_SOCKET: '/s/p.sock' }, 1000, () => true), '/s/p.sock');
  assert.throws(() => computeSocketPath({ PARLEY_SOCKET: 'rel.sock' }, 1000, () => true), /absolute/);
});

test('the private runtime directory, else /tmp', () => {
  if (process.platform === 'linux') {
    assert.equal(computeSocketPath({}, 1000, (d) => d === '/run/user/1000'), '/run/user/1000/parley/parley-v1.sock');
  }
  assert.equal(computeSocketPath({ PARLEY_SOCKET: '' }, 1000, () => false), '/tmp/parley-1000/parley-v1.sock');
});

test('PARLEY_NO_SPAWN forbids starting a daemon unless empty or 0', () => {
  assert.equal(spawnForbidden({}), false);
  assert.equal(spawnForbidden({ PARLEY_NO_SPAWN: '0' }), false);
  assert.equal(spawnForbidden({ PARLEY_NO_SPAWN: '1' }), true);
});
