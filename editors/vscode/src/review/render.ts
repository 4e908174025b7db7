// Renders a review's markdown to safe HTML for the review panel: raw HTML is escaped, images become their alt text, and every link becomes a data attribute the panel's script posts back, so nothing in a review can run script or load remote content. File references are the daemon's (docs/protocol.md, review/get). Imports nothing from vscode.

import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { Reference } from '../hub/types';

/** The link target of an inline reference `[text](target)`, from the reference's text as written. */
export function inlineTarget(text: string): string | undefined {
  const match = /\]\(([^)\s]+)\)$/.exec(text);
  return match ? match[1] : undefined;
}

/** The label of a collapsed reference ``[`path:line`][]``, from its text as written. */
export function collapsedLabel(text: string): string | undefined {
  const match = /^\[(.+)\]\[\]$/s.exec(text);
  return match ? match[1] : undefined;
}

/** Where a reference points, for a tooltip: `src/a.rs:3-5`. */
export function describeReference(ref: Reference): string {
  if (ref.line === undefined) return ref.path;
  if (ref.end_line !== undefined && ref.end_line !== ref.line) return `${ref.path}:${ref.line}-${ref.end_line}`;
  return `${ref.path}:${ref.line}`;
}

const REF_SCHEME = 'parley-ref:';

interface RenderEnv {
  references: Record<string, { href: string; title: string }>;
  byHref: Map<string, number>;
  refs: Reference[];
  /** For each open link, the unresolved reference whose problem follows its closing tag. */
  open: (Reference | undefined)[];
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function createRenderer(): MarkdownIt {
  // html: false escapes every tag a review contains; linkify stays off so only links the author wrote become links.
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });

  // Block elements carry their source lines, so a selection in the panel can say which lines of the review it covers.
  md.core.ruler.push('parley_source_lines', (state) => {
    for (const token of state.tokens) {
      if (token.map && token.nesting === 1) {
        token.attrSet('data-source-line', String(token.map[0]));
        token.attrSet('data-source-end', String(token.map[1]));
      }
    }
  });

  md.renderer.rules.link_open = (tokens: Token[], idx: number, _options, env: RenderEnv) => {
    const token = tokens[idx];
    const href = token.attrGet('href') ?? '';
    const index = href.startsWith(REF_SCHEME) ? Number(href.slice(REF_SCHEME.length)) : env.byHref.get(href);
    if (index !== undefined && env.refs[index]) {
      const ref = env.refs[index];
      const resolved = ref.resolved_path !== undefined;
      env.open.push(resolved ? undefined : ref);
      const title = resolved ? `Open ${describeReference(ref)}` : `Not found: ${ref.problem ?? 'unresolved'}`;
      const attrs = [
        `class="parley-ref${resolved ? '' : ' unresolved'}"`,
        `data-ref="${index}"`,
        `data-path="${escapeHtml(ref.path)}"`,
        ref.line !== undefined ? `data-line="${ref.line}"` : '',
        ref.end_line !== undefined ? `data-end-line="${ref.end_line}"` : '',
        `title="${escapeHtml(title)}"`,
        'role="link"',
        'tabindex="0"',
      ];
      return `<a ${attrs.filter((a) => a !== '').join(' ')}>`;
    }
    env.open.push(undefined);
    if (/^https?:\/\//i.test(href)) {
      return `<a class="external" data-href="${escapeHtml(href)}" title="${escapeHtml(href)}" role="link" tabindex="0">`;
    }
    return `<a class="plain" title="${escapeHtml(href)}">`;
  };

  md.renderer.rules.link_close = (_tokens: Token[], _idx: number, _options, env: RenderEnv) => {
    const unresolved = env.open.pop();
    if (!unresolved) return '</a>';
    return `</a><span class="ref-problem" title="${escapeHtml(unresolved.problem ?? '')}">⚠ ${escapeHtml(unresolved.problem ?? 'not found')}</span>`;
  };

  // Images would load remote content: show their alt text instead.
  md.renderer.rules.image = (tokens: Token[], idx: number) => {
    const token = tokens[idx];
    const alt = token.children ? token.children.map((child) => child.content).join('') : token.content;
    return `<span class="image-alt" title="${escapeHtml(token.attrGet('src') ?? '')}">[image: ${escapeHtml(alt)}]</span>`;
  };
  return md;
}

let renderer: MarkdownIt | undefined;

/** The review's markdown as HTML. References link by their index in `references`. */
export function renderReview(content: string, references: Reference[]): string {
  renderer ??= createRenderer();
  const md = renderer;
  const env: RenderEnv = { references: {}, byHref: new Map(), refs: references, open: [] };
  references.forEach((ref, index) => {
    const label = collapsedLabel(ref.text);
    if (label !== undefined) {
      // A collapsed reference with no definition is plain text to CommonMark; defining its label makes it a link.
      env.references[md.utils.normalizeReference(label)] = { href: `${REF_SCHEME}${index}`, title: '' };
      return;
    }
    const target = inlineTarget(ref.text);
    if (target !== undefined && !env.byHref.has(md.normalizeLink(target))) {
      env.byHref.set(md.normalizeLink(target), index);
    }
  });
  return md.render(content, env);
}

const LIST_MARKER = /^ {0,3}([-*+]|\d{1,9}[.)])(\s|$)/;

/** A review longer than this many lines is painted in two steps: its first screens, then the whole. */
export const HEAD_LINES = 120;

/**
 * The first screens of a long review, cut where a block ends (at a blank line outside a fenced
 * code block, before a line that is not indented, so that no list item or code block is cut),
 * for painting at once while the whole review is rendered; undefined when the review is short
 * enough to paint in one go or has no such place near the top.
 */
export function reviewHead(content: string, lines = HEAD_LINES): string | undefined {
  let fence: string | undefined;
  let offset = 0;
  let line = 0;
  let previousBlank = false;
  /** The last line with text opened or continued a list item: a list marker after it would split the list. */
  let inList = false;
  while (offset < content.length) {
    const nl = content.indexOf('\n', offset);
    const end = nl < 0 ? content.length : nl;
    const text = content.slice(offset, end);
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(text);
    if (fence !== undefined) {
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length && text.trim() === marker[1]) fence = undefined;
    } else if (marker) {
      fence = marker[1];
    } else if (line >= lines && previousBlank && text.trim() !== '' && !/^\s/.test(text) && !(inList && LIST_MARKER.test(text))) {
      // Only worth it when the rest is at least as long again.
      return content.length - offset >= offset ? content.slice(0, offset) : undefined;
    }
    previousBlank = fence === undefined && text.trim() === '';
    if (text.trim() !== '') inList = LIST_MARKER.test(text) || (inList && /^\s/.test(text));
    if (nl < 0) break;
    offset = nl + 1;
    line++;
  }
  return undefined;
}
