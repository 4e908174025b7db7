// Which of a file's threads VS Code is given: every thread of a file with few of them, and only the threads on and around the screen of a file with many (off screen, those of the lines last seen, where the file opens again). VS Code builds a widget for each comment thread of an open file (with its comments rendered, and an editor for the reply box), which costs milliseconds each: a file with 1,000 threads took 39 s to open. Imports nothing from vscode.

/** Lines `start` to `end`, 0-based, both included. */
export interface LineSpan {
  start: number;
  end: number;
}

/** Up to this many threads in a file, all of them are shown, whether the file is on screen or not (so the Comments panel lists them). */
export const ALL_SHOWN_UP_TO = 50;
/** Threads this many screens above or below what is visible are shown, so that scrolling finds them in place. */
export const SHOW_WITHIN_SCREENS = 1;
/** A file with many threads never on screen in this window has the threads of its first lines shown, where it opens. */
export const TOP_LINES = 50;
/** Threads shown stay until they are this many screens away, so that scrolling back and forth does not rebuild them. */
export const KEEP_WITHIN_SCREENS = 3;

/** The visible spans widened by `screens` times their own height on each side. */
export function widen(visible: readonly LineSpan[], screens: number): LineSpan[] {
  return visible.map((span) => {
    const height = span.end - span.start + 1;
    return { start: Math.max(0, span.start - height * screens), end: span.end + height * screens };
  });
}

export function overlaps(lines: LineSpan, spans: readonly LineSpan[]): boolean {
  return spans.some((span) => lines.start <= span.end && span.start <= lines.end);
}

export interface Placement {
  /** The thread's lines (a file-level thread: line 0, where VS Code shows it). */
  lines: LineSpan;
  /** Shown now. */
  shown: boolean;
  /** The user made it or opened it in this window: shown wherever it is. */
  pinned: boolean;
}

/**
 * Whether a thread should be shown, given how many threads its file has and the spans
 * of the file on screen (or, off screen, last seen). A thread not shown yet is shown
 * within `showWithin` screens of them (0 for the spans themselves: the screen of a file
 * just opened, which is filled first, or a file off screen); a shown one stays within
 * `keepWithin` screens.
 */
export function wanted(
  thread: Placement,
  threadsInFile: number,
  visible: readonly LineSpan[],
  showWithin = SHOW_WITHIN_SCREENS,
  keepWithin = KEEP_WITHIN_SCREENS,
): boolean {
  if (thread.pinned || threadsInFile <= ALL_SHOWN_UP_TO) return true;
  return overlaps(thread.lines, widen(visible, thread.shown ? Math.max(keepWithin, showWithin) : showWithin));
}
