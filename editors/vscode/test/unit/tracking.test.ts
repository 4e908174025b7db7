// Range tracking and UTF-16 positions: a thread's range follows typing the way a user expects.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Range } from '../../src/hub/types';
import { TextChange, applyChanges, codePointsToUtf16, offsetAt, positionAt, utf16ToCodePoints } from '../../src/threads/tracking';

const r = (sl: number, sc: number, el: number, ec: number): Range => ({ start: { line: sl, character: sc }, end: { line: el, character: ec } });
const change = (sl: number, sc: number, el: number, ec: number, text: string): TextChange => ({ range: r(sl, sc, el, ec), text });

/** Applies `changes` to `text` the way VS Code does, for checking ranges against real text. */
function edit(text: string, changes: TextChange[]): string {
  let out = text;
  for (const c of changes) out = out.slice(0, offsetAt(out, c.range.start)) + c.text + out.slice(offsetAt(out, c.range.end));
  return out;
}

function textAt(text: string, range: Range): string {
  return text.slice(offsetAt(text, range.start), offsetAt(text, range.end));
}

// Each case: a document, the commented text, edits, and the text the range must hold afterwards.
const cases: { name: string; changes: TextChange[]; expect: string }[] = [
  { name: 'a line inserted above moves the range down', changes: [change(0, 0, 0, 0, '// new\n')], expect: 'let total = 1;' },
  { name: 'two lines deleted above move it up', changes: [change(0, 0, 2, 0, '')], expect: 'let total = 1;' },
  { name: 'typing before it on its line shifts the columns', changes: [change(2, 4, 2, 4, 'pub ')], expect: 'let total = 1;' },
  { name: 'typing right after it does not grow it', changes: [change(2, 18, 2, 18, ' // ok')], expect: 'let total = 1;' },
  { name: 'typing right before it does not pull text in', changes: [change(2, 4, 2, 4, 'X')], expect: 'let total = 1;' },
  { name: 'an edit inside it is part of it', changes: [change(2, 16, 2, 17, '42')], expect: 'let total = 42;' },
  { name: 'an edit below it changes nothing', changes: [change(3, 0, 3, 0, 'more\n')], expect: 'let total = 1;' },
  { name: 'a replacement of the whole text covers the new text', changes: [change(2, 4, 2, 18, 'let sum = 2;')], expect: 'let sum = 2;' },
  { name: 'a deletion of the whole text leaves it empty', changes: [change(2, 4, 2, 18, '')], expect: '' },
  { name: 'several edits of one event apply in order', changes: [change(3, 0, 3, 0, 'x\n'), change(0, 0, 0, 0, 'a\nb\n')], expect: 'let total = 1;' },
  { name: 'emoji before it count as two UTF-16 units', changes: [change(2, 0, 2, 0, '🦀')], expect: 'let total = 1;' },
];

const doc = 'fn main() {\n    // start\n    let total = 1;\n}\n';
const commented = r(2, 4, 2, 18);

for (const c of cases) {
  test(c.name, () => {
    assert.equal(textAt(doc, commented), 'let total = 1;');
    const after = edit(doc, c.changes);
    const moved = applyChanges(commented, c.changes);
    assert.equal(textAt(after, moved), c.expect);
  });
}

test('a multi-line range follows lines inserted inside it', () => {
  const text = 'a\nfn f() {\n  x\n}\nz\n';
  const range = r(1, 0, 3, 1);
  const changes = [change(2, 3, 2, 3, '\n  y')];
  assert.equal(textAt(edit(text, changes), applyChanges(range, changes)), 'fn f() {\n  x\n  y\n}');
});

test('positions and offsets round-trip in UTF-16', () => {
  const text = 'let café = "🦀";\nsecond';
  for (let offset = 0; offset <= text.length; offset++) {
    assert.equal(offsetAt(text, positionAt(text, offset)), offset);
  }
  assert.deepEqual(positionAt(text, text.indexOf('second')), { line: 1, character: 0 });
  assert.equal(offsetAt(text, { line: 0, character: 999 }), text.indexOf('\n'));
});

test('UTF-16 columns convert to the characters agents count', () => {
  const line = '    let café = "🦀";';
  // docs/protocol.md §4: the selection "🦀" is 15-19 in UTF-16 and 15-18 in characters.
  assert.equal(utf16ToCodePoints(line, 15), 15);
  assert.equal(utf16ToCodePoints(line, 19), 18);
  assert.equal(codePointsToUtf16(line, 18), 19);
});
