// Keeps a thread's range on its text while the user types: VS Code does not move a comment thread's range when the document changes, so each text change is applied to the ranges here. Positions are 0-based lines and UTF-16 columns, as in VS Code. Imports nothing from vscode.

import { Position, Range } from '../hub/types';

/** One edit, as VS Code reports it: `range` in the text before the edit is replaced by `text`. */
export interface TextChange {
  range: Range;
  text: string;
}

export function comparePositions(a: Position, b: Position): number {
  return a.line !== b.line ? a.line - b.line : a.character - b.character;
}

/** Where `text` ends when it is inserted at `at`. */
function endOfInsert(at: Position, text: string): Position {
  let lines = 0;
  let lastBreak = -1;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      lines++;
      lastBreak = i;
    }
  }
  if (lines === 0) return { line: at.line, character: at.character + text.length };
  return { line: at.line + lines, character: text.length - lastBreak - 1 };
}

/**
 * Where position `p` is after `change`. `stickToEnd` says where a position inside the
 * replaced text, or exactly where text is inserted, goes: after the inserted text
 * (`true`, for a range's start, so typing just before a commented word does not pull
 * the new text into the thread) or before it (`false`, for a range's end, so typing
 * just after the word does not either).
 */
export function transformPosition(p: Position, change: TextChange, stickToEnd: boolean): Position {
  const { start, end } = change.range;
  if (comparePositions(p, start) < 0) return p;
  if (comparePositions(p, start) === 0 && !stickToEnd) return p;
  const inserted = endOfInsert(start, change.text);
  if (comparePositions(p, end) < 0) return stickToEnd ? inserted : start;
  if (p.line === end.line) {
    return { line: inserted.line, character: inserted.character + (p.character - end.character) };
  }
  return { line: p.line + (inserted.line - end.line), character: p.character };
}

/**
 * The range after `change`. When the edit replaces the whole range with new text, the
 * range covers the new text (the daemon's re-anchoring then judges it); when it only
 * deletes it, the range is left empty at the edit.
 */
export function transformRange(range: Range, change: TextChange): Range {
  const start = transformPosition(range.start, change, true);
  let end = transformPosition(range.end, change, false);
  if (comparePositions(end, start) < 0) end = start;
  const covers =
    comparePositions(change.range.start, range.start) <= 0 && comparePositions(change.range.end, range.end) >= 0;
  if (covers && comparePositions(start, end) === 0 && change.text !== '' && comparePositions(range.start, range.end) !== 0) {
    return { start: change.range.start, end: endOfInsert(change.range.start, change.text) };
  }
  return { start, end };
}

/** Applies the changes of one document event, in the order VS Code reports them. */
export function applyChanges(range: Range, changes: readonly TextChange[]): Range {
  let current = range;
  for (const change of changes) current = transformRange(current, change);
  return current;
}

/** Whether an edit can move `range` at all (it starts at or before the range's end). */
export function affects(range: Range, change: TextChange): boolean {
  return comparePositions(change.range.start, range.end) <= 0;
}

/** The UTF-16 offset of `p` in `text`, clamped to the text. */
export function offsetAt(text: string, p: Position): number {
  let line = 0;
  let offset = 0;
  while (line < p.line) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
    line++;
  }
  const nl = text.indexOf('\n', offset);
  const lineEnd = nl < 0 ? text.length : nl;
  return Math.min(offset + p.character, lineEnd);
}

/** The position of UTF-16 offset `offset` in `text`. */
export function positionAt(text: string, offset: number): Position {
  const clamped = Math.max(0, Math.min(offset, text.length));
  let line = 0;
  let lineStart = 0;
  for (;;) {
    const nl = text.indexOf('\n', lineStart);
    if (nl < 0 || nl >= clamped) break;
    line++;
    lineStart = nl + 1;
  }
  return { line, character: clamped - lineStart };
}

/** UTF-16 code units to Unicode scalar values within `lineText` (what agents count): for showing columns. */
export function utf16ToCodePoints(lineText: string, character: number): number {
  return [...lineText.slice(0, character)].length;
}

/** Unicode scalar values to UTF-16 code units within `lineText`. */
export function codePointsToUtf16(lineText: string, codePoints: number): number {
  let units = 0;
  let count = 0;
  for (const ch of lineText) {
    if (count === codePoints) break;
    units += ch.length;
    count++;
  }
  return units;
}
