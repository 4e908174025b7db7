// The review panel's markdown: references become links the panel can open, unresolved ones say why, and nothing from the review can run script or load remote content.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Reference } from '../../src/hub/types';
import { collapsedLabel, inlineTarget, renderReview, reviewHead } from '../../src/review/render';

const refs: Reference[] = [
  { line: 5, path: 'src/auth.rs', resolved_path: '/w/src/auth.rs', text: '[`src/auth.rs:5`][]' },
  { end_line: 20, line: 10, path: 'src/lib.rs', resolved_path: '/w/src/lib.rs', text: '[the list](src/lib.rs#L10-L20)' },
  { line: 3, path: 'src/gone.rs', problem: 'file src/gone.rs does not exist under /w', text: '[`src/gone.rs:3`][]' },
  { path: 'README.md', resolved_path: '/w/README.md', text: '[`README.md`][]' },
];

function check(markdown: string, ...expected: (string | RegExp)[]): string {
  const html = renderReview(markdown, refs);
  for (const e of expected) {
    if (typeof e === 'string') assert.ok(html.includes(e), `expected ${JSON.stringify(e)} in\n${html}`);
    else assert.match(html, e);
  }
  return html;
}

test('a collapsed reference becomes a link to its file and line', () => {
  check('See [`src/auth.rs:5`][].', 'class="parley-ref" data-ref="0" data-path="src/auth.rs" data-line="5"', '<code>src/auth.rs:5</code></a>');
});

test('an inline reference keeps its text and carries its range', () => {
  check('[the list](src/lib.rs#L10-L20)', 'data-ref="1"', 'data-line="10" data-end-line="20"', '>the list</a>');
});

test('a reference without a line opens the file', () => {
  const html = check('[`README.md`][]', 'data-ref="3"');
  assert.ok(!html.includes('data-line'));
});

test('an unresolved reference is marked with the daemon\'s reason', () => {
  check('[`src/gone.rs:3`][]', 'parley-ref unresolved', '⚠ file src/gone.rs does not exist under /w');
});

test('references inside code are left as code', () => {
  const html = check('```\n[`src/auth.rs:5`][]\n```\n\nand `[`', '<pre><code>[`src/auth.rs:5`][]');
  assert.ok(!html.includes('data-ref'));
});

test('raw HTML is shown as text, never as markup', () => {
  const html = check('<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>', '&lt;script&gt;');
  assert.ok(!/<script|<img|onerror=/.test(html.replace(/&lt;(script|img)[^&]*/g, '')), html);
});

test('links with script schemes are not links', () => {
  const html = check('[x](javascript:alert(1)) [y](data:text/html,hi) [z](vbscript:x)');
  assert.ok(!html.includes('href'), html);
  assert.ok(!html.includes('javascript:alert(1)"'), html);
});

test('images show their alt text instead of loading', () => {
  const html = check('![diagram](https://example.com/d.png)', '[image: diagram]');
  assert.ok(!html.includes('<img'), html);
});

test('web links are posted back, not followed by the webview', () => {
  const html = check('[docs](https://example.com/a)', 'class="external" data-href="https://example.com/a"');
  assert.ok(!/\shref=/.test(html), html);
});

test('blocks carry their source lines for selections in the panel', () => {
  check('# Title\n\nparagraph\n', '<h1 data-source-line="0" data-source-end="1">', '<p data-source-line="2" data-source-end="3">');
});

test('reference texts are taken apart as the daemon wrote them', () => {
  assert.equal(collapsedLabel('[`a.rs:1`][]'), '`a.rs:1`');
  assert.equal(collapsedLabel('[text](a.rs)'), undefined);
  assert.equal(inlineTarget('[text](a.rs#L1)'), 'a.rs#L1');
  assert.equal(inlineTarget('[`a.rs`][]'), undefined);
});

test('a long review is painted first from a head that ends where a block ends', () => {
  const items = Array.from({ length: 300 }, (_, i) => (i % 10 === 0 ? `## Part ${i}\n` : `- item ${i}`)).join('\n');
  const review = `# Review\n\n${items}\n`;
  const head = reviewHead(review, 50);
  assert.ok(head !== undefined);
  assert.ok(review.startsWith(head));
  assert.ok(head.split('\n').length >= 50);
  // It ends after a blank line, before a block that does not continue a list: the head renders as the same blocks as the top of the whole.
  assert.match(head, /\n\n$/);
  assert.match(review.slice(head.length), /^(## Part \d+\n|- item \d+\n)/);
  assert.match(head, /## Part \d+\n\n$/);
  const whole = renderReview(review, refs);
  assert.ok(whole.startsWith(renderReview(head, refs).replace(/\n$/, '')));
});

test('a short review, or one whose top is a single fenced block, is painted in one go', () => {
  assert.equal(reviewHead('# Short\n\nOne line.\n', 50), undefined);
  const fenced = '# Code\n\n```\n' + Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n\n') + '\n```\n\nAfter.\n';
  assert.equal(reviewHead(fenced, 50), undefined);
  const list = '# List\n\n' + Array.from({ length: 200 }, (_, i) => `- item ${i}`).join('\n\n') + '\n';
  assert.equal(reviewHead(list, 50), undefined);
  const indented = '# List\n\n- item\n\n' + Array.from({ length: 200 }, (_, i) => `  continued ${i}`).join('\n\n') + '\n';
  assert.equal(reviewHead(indented, 50), undefined);
});
