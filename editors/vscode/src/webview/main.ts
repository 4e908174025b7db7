// The review panel's script, running inside the webview: shows the HTML the extension rendered, posts link clicks, revision choices and the selection back. It never builds HTML from the review itself.

import type { FromWebview, RevisionEntry, ToWebview } from '../review/messages';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const header = document.getElementById('header') as HTMLElement;
const title = document.getElementById('title') as HTMLElement;
const history = document.getElementById('history') as HTMLSelectElement;
const banner = document.getElementById('banner') as HTMLElement;
const bannerSource = document.getElementById('banner-source') as HTMLElement;
const content = document.getElementById('content') as HTMLElement;
let revision = 0;
/** The revision last painted, so that the whole of a review painted head first is not counted as its first paint. */
let painted = -1;

function post(message: FromWebview): void {
  vscode.postMessage(message);
}

function show(message: Extract<ToWebview, { type: 'show' }>): void {
  // The head of a review whose reader has scrolled down would move them: wait for the whole.
  if (message.partial && message.keepScroll && window.scrollY > 0) {
    post({ type: 'painted', revision: message.revision, ms: 0, first: false, complete: false, at: Date.now() });
    return;
  }
  const started = performance.now();
  const scroll = message.keepScroll ? window.scrollY : 0;
  revision = message.revision;
  header.hidden = false;
  // Who made it, so that a round's rendered review is not taken for the walkthrough an agent presented.
  const source = message.source ? ` · ${message.source}` : '';
  title.textContent = `${message.baseUri} · revision ${message.revision}${source} · ${new Date(message.updatedAt).toLocaleString()}`;
  bannerSource.textContent = message.source ? ` (${message.source})` : '';
  showHistory(message.history, message.revision);
  banner.hidden = message.latest;
  // The extension rendered this HTML with raw HTML disabled; the CSP forbids any script or remote load it might still name.
  content.innerHTML = message.html;
  window.scrollTo(0, scroll);
  vscode.setState({ revision: message.revision });
  const first = painted !== message.revision;
  painted = message.revision;
  requestAnimationFrame(() => post({ type: 'painted', revision: message.revision, ms: performance.now() - started, first, complete: !message.partial, at: Date.now() }));
}

/** Fills the history menu, each revision with who made it, `selected` chosen. */
function showHistory(entries: RevisionEntry[], selected: number): void {
  history.replaceChildren(
    ...entries.map((entry) => {
      const option = document.createElement('option');
      option.value = String(entry.revision);
      const by = entry.source ? ` · ${entry.source}` : '';
      option.textContent = `Revision ${entry.revision}${by} · ${new Date(entry.updatedAt).toLocaleString()}`;
      option.selected = entry.revision === selected;
      return option;
    }),
  );
  history.disabled = entries.length < 2;
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  if (message.type === 'show') show(message);
  else if (message.type === 'history') showHistory(message.history, revision);
  else if (message.type === 'empty') {
    header.hidden = true;
    banner.hidden = true;
    content.replaceChildren();
    const p = document.createElement('p');
    p.className = 'empty';
    p.textContent = message.message;
    content.append(p);
  }
});

function activate(target: EventTarget | null): void {
  const link = target instanceof Element ? target.closest('a') : null;
  if (!link) return;
  if (link.classList.contains('parley-ref')) {
    post({ type: 'open', revision, ref: Number(link.getAttribute('data-ref')) });
  } else if (link.classList.contains('external')) {
    post({ type: 'openExternal', href: link.getAttribute('data-href') ?? '' });
  }
}

// A link click opens a file: do not move the focus into the panel first.
document.addEventListener('mousedown', (event) => {
  if (event.target instanceof Element && event.target.closest('a.parley-ref')) event.preventDefault();
});
document.addEventListener('click', (event) => {
  if (event.target instanceof Element && event.target.closest('a')) {
    event.preventDefault();
    activate(event.target);
  }
});
document.addEventListener('keydown', (event) => {
  if (event.key === 'Enter') activate(event.target);
});

history.addEventListener('change', () => post({ type: 'showRevision', revision: Number(history.value) }));
document.getElementById('latest')?.addEventListener('click', () => post({ type: 'showRevision', revision: -1 }));

/** The source lines of the review that the block holding `node` came from. */
function sourceLines(node: Node | null): [number, number] | undefined {
  let element = node instanceof Element ? node : node?.parentElement ?? null;
  while (element && element !== content) {
    const start = element.getAttribute('data-source-line');
    if (start !== null) return [Number(start), Number(element.getAttribute('data-source-end') ?? start)];
    element = element.parentElement;
  }
  return undefined;
}

let selectionTimer: number | undefined;
document.addEventListener('selectionchange', () => {
  window.clearTimeout(selectionTimer);
  selectionTimer = window.setTimeout(() => {
    const selection = document.getSelection();
    const text = selection?.toString() ?? '';
    const first = sourceLines(selection?.anchorNode ?? null);
    const last = sourceLines(selection?.focusNode ?? null);
    const lines = [first, last].filter((l): l is [number, number] => l !== undefined);
    const startLine = lines.length ? Math.min(...lines.map((l) => l[0])) : 0;
    const endLine = lines.length ? Math.max(...lines.map((l) => l[1])) : 0;
    post({ type: 'selection', text, startLine, endLine });
  }, 100);
});

post({ type: 'ready' });
