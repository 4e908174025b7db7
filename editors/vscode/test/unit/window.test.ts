// Which threads VS Code is given: all of a file with few, only those around the screen of a file with many.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALL_SHOWN_UP_TO, KEEP_WITHIN_SCREENS, LineSpan, TOP_LINES, overlaps, wanted, widen } from '../../src/threads/window';

const screen: LineSpan[] = [{ start: 100, end: 139 }];
const at = (line: number, shown = false, pinned = false) => ({ lines: { start: line, end: line }, shown, pinned });

test('every thread of a file with few threads is shown, on screen or not', () => {
  assert.equal(wanted(at(5000), ALL_SHOWN_UP_TO, []), true);
  assert.equal(wanted(at(5000), ALL_SHOWN_UP_TO, screen), true);
});

test('a file with many threads shows those on screen and a screen around it', () => {
  const many = ALL_SHOWN_UP_TO + 1;
  assert.equal(wanted(at(120), many, screen), true);
  assert.equal(wanted(at(60), many, screen), true);
  assert.equal(wanted(at(179), many, screen), true);
  assert.equal(wanted(at(180), many, screen), false);
  assert.equal(wanted(at(59), many, screen), false);
  // Filled screen first: only what is visible.
  assert.equal(wanted(at(120), many, screen, 0), true);
  assert.equal(wanted(at(145), many, screen, 0), false);
  // Not on screen at all: none, unless the user made or opened it here.
  assert.equal(wanted(at(120), many, []), false);
  assert.equal(wanted(at(120, false, true), many, []), true);
});

test('a shown thread stays until it is several screens away, so scrolling back does not rebuild it', () => {
  const many = ALL_SHOWN_UP_TO + 1;
  const far = 139 + 40 * KEEP_WITHIN_SCREENS;
  assert.equal(wanted(at(far, true), many, screen), true);
  assert.equal(wanted(at(far, false), many, screen), false);
  assert.equal(wanted(at(far + 1, true), many, screen), false);
});

test('spans widen by their own height and stop at the first line; a range overlaps by any line', () => {
  assert.deepEqual(widen([{ start: 10, end: 29 }], 1), [{ start: 0, end: 49 }]);
  assert.equal(overlaps({ start: 0, end: 10 }, [{ start: 10, end: 12 }]), true);
  assert.equal(overlaps({ start: 0, end: 9 }, [{ start: 10, end: 12 }]), false);
});

test('off screen, a file with many threads keeps only those on the lines last seen, where it opens again', () => {
  const many = ALL_SHOWN_UP_TO + 1;
  assert.equal(wanted(at(120, true), many, screen, 0, 0), true);
  assert.equal(wanted(at(141, true), many, screen, 0, 0), false);
  assert.equal(wanted(at(10), many, [{ start: 0, end: TOP_LINES - 1 }], 0, 0), true);
  assert.equal(wanted(at(TOP_LINES), many, [{ start: 0, end: TOP_LINES - 1 }], 0, 0), false);
});
