// The review panel's script, running inside the webview: shows the HTML the extension rendered (a review, or a walkthrough whose diagrams it draws with the bundled mermaid, loaded on first need), posts link clicks, button clicks, revision choices and the selection back. It never builds HTML from the review itself.

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
const switcher = document.getElementById('switch') as HTMLAnchorElement;
const stepsBar = document.getElementById('steps') as HTMLElement;
const stepLabel = document.getElementById('step-label') as HTMLElement;
/** The nonce this script was loaded with: the mermaid script is added with it. */
const nonce = (document.currentScript as HTMLScriptElement | null)?.nonce ?? '';
let revision = 0;
/** The walkthrough shown, if one is. */
let walkthrough: string | undefined;
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
  walkthrough = undefined;
  header.hidden = false;
  history.parentElement!.hidden = false;
  stepsBar.hidden = true;
  showSwitch(message.other);
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

/** The header's link to the other document of the panel (a review, a walkthrough), if there is one. */
function showSwitch(other: 'review' | 'walkthrough' | undefined): void {
  switcher.hidden = other === undefined;
  switcher.dataset.to = other ?? '';
  switcher.textContent = other === 'review' ? 'Show the review' : 'Show the walkthrough';
}

interface MermaidApi {
  draw(host: Element, source: string, dark: boolean): Promise<void>;
}
let mermaidLoading: Promise<MermaidApi> | undefined;

/** The bundled mermaid (dist/mermaid.js), added once with this script's nonce: the only other script the panel's policy lets run. */
function loadMermaid(): Promise<MermaidApi> {
  mermaidLoading ??= new Promise<MermaidApi>((resolve, reject) => {
    const script = document.createElement('script');
    script.nonce = nonce;
    script.src = document.body.dataset.mermaid ?? '';
    script.onload = () => {
      const api = (globalThis as unknown as { parleyMermaid?: MermaidApi }).parleyMermaid;
      if (api) resolve(api);
      else reject(new Error('the diagram renderer did not start'));
    };
    script.onerror = () => reject(new Error('the diagram renderer could not be loaded'));
    document.head.append(script);
  });
  return mermaidLoading;
}

/** The current step was revealed with the walkthrough: reveal it again once the diagrams, which change the page's height, are drawn. */
let revealAfterDrawing = false;
for (const event of ['wheel', 'keydown', 'mousedown']) window.addEventListener(event, () => (revealAfterDrawing = false), { passive: true });

/** Diagrams drawn before, by theme and source: a walkthrough shown again (a click's state changed) is not drawn again. */
const drawn = new Map<string, Element>();

/** Draws the walkthrough's diagrams, in order; a diagram mermaid cannot read keeps its source, with mermaid's message. */
async function drawDiagrams(id: string, rev: number): Promise<void> {
  const figures = [...content.querySelectorAll<HTMLElement>('figure.wt-diagram')];
  if (figures.length === 0) return;
  const started = performance.now();
  const dark = document.body.classList.contains('vscode-dark') || document.body.classList.contains('vscode-high-contrast');
  let done = 0;
  let failed = 0;
  let api: MermaidApi | undefined;
  for (const figure of figures) {
    const source = figure.querySelector('pre.wt-mermaid-source')?.textContent ?? '';
    const key = `${dark}\n${source}`;
    try {
      const cached = drawn.get(key);
      if (cached) {
        figure.replaceChildren(cached.cloneNode(true));
      } else {
        api ??= await loadMermaid();
        const host = document.createElement('div');
        host.className = 'wt-svg';
        await api.draw(host, source, dark);
        drawn.set(key, host);
        // Shown already: the walkthrough on screen may have been replaced meanwhile.
        if (!figure.isConnected) continue;
        figure.replaceChildren(host.cloneNode(true));
      }
      done++;
    } catch (error) {
      failed++;
      const problem = document.createElement('div');
      problem.className = 'wt-problem';
      problem.textContent = `This diagram could not be drawn: ${(error as Error).message}`;
      figure.append(problem);
    }
  }
  if (walkthrough === id && revision === rev && revealAfterDrawing) content.querySelector('.wt-current')?.scrollIntoView({ block: 'center' });
  revealAfterDrawing = false;
  if (walkthrough === id && revision === rev) post({ type: 'diagrams', id, revision: rev, drawn: done, failed, ms: performance.now() - started, at: Date.now() });
}

function showWalkthrough(message: Extract<ToWebview, { type: 'walkthrough' }>): void {
  const scroll = message.keepScroll && walkthrough === message.id ? window.scrollY : 0;
  walkthrough = message.id;
  revision = message.revision;
  header.hidden = false;
  banner.hidden = true;
  history.parentElement!.hidden = true;
  title.textContent = message.heading;
  showSwitch(message.other);
  content.innerHTML = message.html;
  stepsBar.hidden = message.steps === 0;
  window.scrollTo(0, scroll);
  // Shown anew (a step taken while the panel showed the review, the switch back to it): at the current
  // step, again once the diagrams above it are drawn (unless the reader has scrolled meanwhile).
  revealAfterDrawing = message.step !== undefined && !message.keepScroll;
  if (message.step) markStep(message.step.label, message.step.block, revealAfterDrawing);
  else stepLabel.textContent = `${message.steps} step${message.steps === 1 ? '' : 's'}`;
  vscode.setState({ walkthrough: message.id, revision: message.revision });
  void drawDiagrams(message.id, message.revision);
}

/** Marks comment block `block` as the current step, scrolling to it when `reveal`. */
function markStep(label: string, block: number, reveal: boolean): void {
  stepLabel.textContent = label;
  for (const element of content.querySelectorAll('.wt-current')) element.classList.remove('wt-current');
  const target = document.getElementById(`block-${block}`);
  target?.classList.add('wt-current');
  if (reveal) target?.scrollIntoView({ block: 'center' });
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
  else if (message.type === 'walkthrough') showWalkthrough(message);
  else if (message.type === 'step') markStep(message.label, message.block, true);
  else if (message.type === 'history') showHistory(message.history, revision);
  else if (message.type === 'empty') {
    walkthrough = undefined;
    stepsBar.hidden = true;
    header.hidden = true;
    banner.hidden = true;
    content.replaceChildren();
    const p = document.createElement('p');
    p.className = 'empty';
    p.textContent = message.message;
    content.append(p);
  }
});

/** A number from a data attribute. */
function data(element: Element, name: string): number {
  return Number(element.getAttribute(`data-${name}`));
}

function activate(target: EventTarget | null): void {
  const button = target instanceof Element ? target.closest('button.wt-act') : null;
  if (button && walkthrough !== undefined) {
    post({ type: 'act', id: walkthrough, block: data(button, 'block') });
    return;
  }
  const link = target instanceof Element ? target.closest('a') : null;
  if (!link) return;
  if (link.classList.contains('wt-place')) {
    post({ type: 'openPlace', block: data(link, 'block'), place: data(link, 'place') });
  } else if (link.classList.contains('wt-candidate')) {
    post({ type: 'openPlace', block: data(link, 'block'), candidate: data(link, 'candidate') });
  } else if (link.classList.contains('wt-diff-file')) {
    post({ type: 'openDiffFile', block: data(link, 'block'), file: data(link, 'file') });
  } else if (link.id === 'switch') {
    post({ type: 'switch', to: link.dataset.to === 'review' ? 'review' : 'walkthrough' });
  } else if (link.classList.contains('parley-ref')) {
    post({ type: 'open', revision, ref: Number(link.getAttribute('data-ref')) });
  } else if (link.classList.contains('external')) {
    post({ type: 'openExternal', href: link.getAttribute('data-href') ?? '' });
  }
}

// A link click opens a file: do not move the focus into the panel first.
document.addEventListener('mousedown', (event) => {
  if (event.target instanceof Element && event.target.closest('a.parley-ref, a.wt-place, a.wt-candidate, a.wt-diff-file')) event.preventDefault();
});
document.addEventListener('click', (event) => {
  if (event.target instanceof Element && event.target.closest('a, button.wt-act')) {
    event.preventDefault();
    activate(event.target);
  }
});
document.getElementById('prev')?.addEventListener('click', () => post({ type: 'stepBy', by: -1 }));
document.getElementById('next')?.addEventListener('click', () => post({ type: 'stepBy', by: 1 }));
document.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !(event.target instanceof HTMLButtonElement)) activate(event.target);
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
