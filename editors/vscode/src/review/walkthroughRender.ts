// Renders a walkthrough for the review panel: its markdown parts through the review renderer (raw HTML escaped, links as data attributes), and its blocks in place: a diagram's source for the panel's bundled mermaid to draw, each comment with its places (or why it was not placed, with the candidates), each gitdiff as the list of files it changes, each action as a button with where its last click stands. Imports nothing from vscode.

import { Walkthrough, WalkthroughBlock, WalkthroughPlace } from '../hub/types';
import { ChangedFile, clickLabel, describePlace, iconName } from '../walkthrough/model';
import { renderReview } from './render';

/** What the window found of a gitdiff block's files (git runs in the extension host). */
export type DiffListing = { files: ChangedFile[] } | { error: string };

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function placeLink(block: number, place: WalkthroughPlace, kind: 'place' | 'candidate', n: number): string {
  const where = describePlace(place);
  return `<a class="wt-${kind}" data-block="${block}" data-${kind}="${n}" role="link" tabindex="0" title="Open ${escapeHtml(where)}">${escapeHtml(where)}</a>`;
}

const STATUS_LETTER: Record<ChangedFile['status'], string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', 'type changed': 'T' };

function renderBlock(walkthrough: Walkthrough, block: WalkthroughBlock, diffs: Map<number, DiffListing>): string {
  const i = block.index;
  switch (block.kind) {
    case 'mermaid':
      // The panel's script draws it; until then (or if mermaid cannot), the source shows.
      return `<figure class="wt-diagram" id="block-${i}" data-block="${i}"><pre class="wt-mermaid-source">${escapeHtml(block.source)}</pre></figure>\n`;
    case 'comment': {
      // The name is letters, digits and dashes only (iconName), so it is safe in the class attribute.
      const icon = `<span class="wt-icon codicon codicon-${iconName(block.icon)}" aria-hidden="true"></span>`;
      let where: string;
      if (block.places.length > 0) {
        where = `<div class="wt-where">${icon} ${block.places.map((p, n) => placeLink(i, p, 'place', n)).join(', ')}</div>`;
      } else {
        const candidates = block.candidates ?? [];
        const could = candidates.length > 0 ? `<div class="wt-candidates">It could mean: ${candidates.map((p, n) => placeLink(i, p, 'candidate', n)).join(', ')}</div>` : '';
        where =
          `<div class="wt-where wt-unplaced">${icon} <strong>Not placed</strong> (<code>${escapeHtml(block.location)}</code>): ` +
          `<span class="wt-problem">${escapeHtml(block.problem ?? 'the location did not resolve')}</span></div>${could}`;
      }
      return `<section class="wt-comment${block.places.length === 0 ? ' unplaced' : ''}" id="block-${i}" data-block="${i}">${where}<div class="wt-body">${renderReview(block.body, [])}</div></section>\n`;
    }
    case 'gitdiff': {
      const head = `<div class="wt-diff-head">Changes <code>${escapeHtml(block.range)}</code>${block.exclude_staged ? ' without staged changes' : ''}${block.exclude_unstaged ? ' without unstaged changes' : ''}</div>`;
      if (block.problem) return `<section class="wt-gitdiff" id="block-${i}" data-block="${i}">${head}<div class="wt-problem">${escapeHtml(block.problem)}</div></section>\n`;
      const listing = diffs.get(i);
      let body: string;
      if (!listing) body = '<div class="wt-diff-pending">Listing the files…</div>';
      else if ('error' in listing) body = `<div class="wt-problem">${escapeHtml(listing.error)}</div>`;
      else if (listing.files.length === 0) body = '<div class="wt-diff-empty">No files changed.</div>';
      else {
        const items = listing.files.map((f, n) => {
          const renamed = f.oldPath !== f.path ? ` <span class="wt-old-path">(from ${escapeHtml(f.oldPath)})</span>` : '';
          return `<li><span class="wt-status wt-${f.status.replace(' ', '-')}" title="${f.status}">${STATUS_LETTER[f.status]}</span> <a class="wt-diff-file" data-block="${i}" data-file="${n}" role="link" tabindex="0" title="Open the diff of ${escapeHtml(f.path)}">${escapeHtml(f.path)}</a>${renamed}</li>`;
        });
        body = `<ul class="wt-files">${items.join('')}</ul>`;
      }
      return `<section class="wt-gitdiff" id="block-${i}" data-block="${i}">${head}${body}</section>\n`;
    }
    case 'action': {
      if (block.problem) return `<div class="wt-action" id="block-${i}" data-block="${i}"><span class="wt-problem">${escapeHtml(block.problem)}</span></div>\n`;
      const last = block.clicks.at(-1);
      const state = last ? `<span class="wt-click-state wt-${escapeHtml(last.state)}" data-state="${escapeHtml(last.state)}">${escapeHtml(clickLabel(last, last.agent ?? walkthrough.presented_by))}</span>` : '';
      const count = block.clicks.length > 1 ? ` <span class="wt-clicks">(${block.clicks.length} clicks)</span>` : '';
      return (
        `<div class="wt-action" id="block-${i}" data-block="${i}"><button class="wt-act" data-block="${i}" title="Sends ${escapeHtml(walkthrough.presented_by)}: ${escapeHtml(block.message)}">${escapeHtml(block.button)}</button> ` +
        `${state}${count}</div>\n`
      );
    }
  }
}

/** The walkthrough's document as HTML, its parts in order. */
export function renderWalkthrough(walkthrough: Walkthrough, diffs: Map<number, DiffListing> = new Map()): string {
  const blocks = new Map(walkthrough.blocks.map((b) => [b.index, b]));
  const out: string[] = [];
  const shown = new Set<number>();
  for (const part of walkthrough.parts) {
    if (part.kind === 'markdown') out.push(renderReview(part.text, walkthrough.references));
    else {
      const block = blocks.get(part.index);
      if (block) {
        out.push(renderBlock(walkthrough, block, diffs));
        shown.add(block.index);
      }
    }
  }
  // Every block is shown, even one the parts leave out.
  for (const block of walkthrough.blocks) if (!shown.has(block.index)) out.push(renderBlock(walkthrough, block, diffs));
  return out.join('');
}

/** How many diagrams the walkthrough has (the panel reports when all are drawn). */
export function diagramCount(walkthrough: Walkthrough): number {
  return walkthrough.blocks.filter((b) => b.kind === 'mermaid').length;
}
