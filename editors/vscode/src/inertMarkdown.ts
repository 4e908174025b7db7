// Comment bodies from agents, reviewers and other clients made inert before VS Code's comment widget renders them: every image is shown as its markdown source instead of being loaded, so a comment cannot make this window fetch a URL (a tracking pixel, or data smuggled out in its query). Raw HTML needs nothing here: a MarkdownString without `supportHtml` drops it. Imports nothing from vscode.

import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';

let parser: MarkdownIt | undefined;

/** A CommonMark parser that reads raw HTML as HTML, as VS Code's renderer does before dropping it. */
function markdown(): MarkdownIt {
  parser ??= new MarkdownIt({ html: true, linkify: false, typographer: false });
  return parser;
}

/** Whether `tokens` (or their children) hold an image. */
function hasImage(tokens: Token[]): boolean {
  return tokens.some((t) => t.type === 'image' || (t.children !== null && hasImage(t.children)));
}

/** The lines (0-based, end exclusive) of `markdown`'s fenced and indented code blocks, where nothing renders. */
function codeLines(tokens: Token[]): Set<number> {
  const lines = new Set<number>();
  for (const token of tokens) {
    if ((token.type === 'fence' || token.type === 'code_block') && token.map) {
      for (let line = token.map[0]; line < token.map[1]; line++) lines.add(line);
    }
  }
  return lines;
}

/** `text` with every `![` made `!\[`, which CommonMark reads as a literal `![`: no image can start. */
function escapeImages(text: string): string {
  return text.replace(/!\[/g, '!\\[');
}

/**
 * `body` as it can be shown without loading anything: unchanged when it has no image; otherwise with every `![` outside code
 * blocks written `!\[`, so `![alt](https://x/?d=…)`, `![alt][ref]` and `[![alt](src)](href)` show as their text (a code span that
 * holds `![` then shows the backslash too). Checked by parsing the result: should an image remain, every `![` is escaped.
 */
export function inertImages(body: string): string {
  if (!body.includes('![')) return body;
  const tokens = markdown().parse(body, {});
  if (!hasImage(tokens)) return body;
  const code = codeLines(tokens);
  const escaped = body
    .split('\n')
    .map((line, index) => (code.has(index) ? line : escapeImages(line)))
    .join('\n');
  return hasImage(markdown().parse(escaped, {})) ? escapeImages(body) : escaped;
}
