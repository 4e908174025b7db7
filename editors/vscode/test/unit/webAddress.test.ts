// Links handed to the system's opener are web pages only.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isWebAddress } from '../../src/webAddress';

test('only http and https links are web addresses', () => {
  assert.ok(isWebAddress('https://github.com/octo/app/pull/7#discussion_r1'));
  assert.ok(isWebAddress('HTTP://github.example/pull/7'));
  for (const link of ['file:///etc/passwd', 'command:workbench.action.terminal.new', 'vscode://file/x', 'calc.exe', 'https://', '', ' https://x']) {
    assert.ok(!isWebAddress(link), link);
  }
});
