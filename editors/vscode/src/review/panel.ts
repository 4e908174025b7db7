// The review panel: a webview beside the editor showing the newest review of the window's folders, live as agents present and change it, with the revisions the daemon keeps (review/history), each labelled with who made it; or the newest walkthrough (src/walkthrough/controller.ts), whichever an agent presented last, with a link to the other. Markdown is rendered here (render.ts) and shown under a strict content security policy; link clicks come back as messages and open the file at the referenced lines.

import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { Review, ReviewGetParams, ReviewHistoryParams, ReviewRevision } from '../hub/types';
import { Log } from '../log';
import { isWebAddress } from '../webAddress';
import { WalkthroughController } from '../walkthrough/controller';
import { FromWebview, RevisionEntry, ToWebview } from './messages';
import { describeReference, renderReview, reviewHead } from './render';

export const VIEW_TYPE = 'parley.review';
/** How long the whole of a long review waits for the panel to say its head is painted. */
const HEAD_WAIT_MS = 300;
/** How many revisions of each review the window holds in memory (the daemon keeps more; older ones are fetched when picked). */
const HISTORY_LIMIT = 50;

/** How the store asks the daemon: the hub client's `request`. */
export type HubRequest = <T>(method: string, params?: unknown) => Promise<T>;

/** The reviews of this window's folders, with their revisions: those the daemon keeps, and those the window has seen. */
export class ReviewStore {
  private readonly byBase = new Map<string, Review[]>();
  /** The daemon's list of kept revisions of each review, newest first. */
  private readonly kept = new Map<string, ReviewRevision[]>();
  private hub: HubRequest | undefined;
  private readonly changed = new vscode.EventEmitter<{ review: Review; live: boolean }>();
  readonly onDidChange = this.changed.event;
  private readonly historyChanged = new vscode.EventEmitter<string>();
  /** The daemon's history of a review (its base) was read again, or an older revision arrived. */
  readonly onDidChangeHistory = this.historyChanged.event;

  /** Reads revisions from the daemon through `request` from now on. */
  useDaemon(request: HubRequest): void {
    this.hub = request;
    for (const base of this.byBase.keys()) void this.refreshHistory(base);
  }

  /** Reads the daemon's list of the kept revisions of the review of `base`. */
  async refreshHistory(base: string): Promise<void> {
    if (!this.hub) return;
    try {
      const result = await this.hub<{ revisions: ReviewRevision[] }>('review/history', { workspace: base } satisfies ReviewHistoryParams);
      this.kept.set(base, result.revisions.filter((r) => r.base_uri === base));
      this.historyChanged.fire(base);
    } catch {
      // An older daemon, or a connection that just dropped: the menu keeps what the window saw.
    }
  }

  /** Fetches revision `revision` of the review of `base` from the daemon, unless the window holds it. */
  async load(base: string, revision: number): Promise<Review | undefined> {
    const held = this.revision(base, revision);
    if (held || !this.hub) return held;
    try {
      const result = await this.hub<{ reviews: Review[] }>('review/get', { workspace: base, revision } satisfies ReviewGetParams);
      const found = result.reviews[0];
      if (found) {
        this.apply(found, false);
        this.historyChanged.fire(base);
      }
      return found;
    } catch {
      return undefined;
    }
  }

  /** Keeps `review` unless a newer revision of it is already held (docs/protocol.md §8). */
  apply(review: Review, live: boolean): void {
    const revisions = this.byBase.get(review.base_uri) ?? [];
    const newest = revisions[0];
    if (newest && newest.revision >= review.revision) {
      // A replayed or duplicate event: a revision may still fill a gap in the history.
      if (!revisions.some((r) => r.revision === review.revision)) {
        revisions.push(review);
        revisions.sort((a, b) => b.revision - a.revision);
      }
      return;
    }
    revisions.unshift(review);
    revisions.length = Math.min(revisions.length, HISTORY_LIMIT);
    this.byBase.set(review.base_uri, revisions);
    this.changed.fire({ review, live });
    void this.refreshHistory(review.base_uri);
  }

  /** Replaces everything with `reviews` (after a daemon restart), keeping history of the same reviews. */
  replace(reviews: Review[]): void {
    const keep = new Set(reviews.map((r) => r.base_uri));
    for (const base of [...this.byBase.keys()]) if (!keep.has(base)) this.byBase.delete(base);
    for (const review of reviews) this.apply(review, false);
    for (const base of this.byBase.keys()) void this.refreshHistory(base);
  }

  /** The most recently changed review. */
  latest(): Review | undefined {
    let best: Review | undefined;
    for (const revisions of this.byBase.values()) {
      const r = revisions[0];
      if (r && (!best || r.updated_at > best.updated_at)) best = r;
    }
    return best;
  }

  revision(base: string, revision: number): Review | undefined {
    return this.byBase.get(base)?.find((r) => r.revision === revision);
  }

  /** The revisions of the review of `base`, newest first: the daemon's list, with any the window saw that it lacks. */
  history(base: string): RevisionEntry[] {
    const entries = new Map<number, RevisionEntry>();
    for (const r of this.byBase.get(base) ?? []) entries.set(r.revision, { revision: r.revision, updatedAt: r.updated_at, source: r.source?.label });
    for (const r of this.kept.get(base) ?? []) entries.set(r.revision, { revision: r.revision, updatedAt: r.updated_at, source: r.source.label });
    return [...entries.values()].sort((a, b) => b.revision - a.revision);
  }
}

/** A temporary highlight of the lines a reference names. */
const highlight = vscode.window.createTextEditorDecorationType({
  isWholeLine: true,
  backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
  overviewRulerColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
  overviewRulerLane: vscode.OverviewRulerLane.Center,
});

export class ReviewPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  /** The review shown and whether it is the newest revision. */
  private shown: Review | undefined;
  private pinnedRevision: number | undefined;
  private ready = false;
  /** The panel's selection, for agents' get_selection while the panel is active. */
  selection: { text: string; startLine: number; endLine: number } | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private receivedAt = new Map<number, number>();
  /** Counts renders, so that the second half of a render painted head first is dropped once a newer render has begun. */
  private generation = 0;
  /** Posts the whole of a review whose head is being painted. */
  private afterHead: (() => void) | undefined;
  /** The editor a reference just opened, which keeps the focus for a moment. */
  private focusAfterOpen: { editor: vscode.TextEditor; until: number } | undefined;
  /** What the panel shows: the review, or the walkthrough (whichever came last, or the person chose). */
  private mode: 'review' | 'walkthrough' = 'review';
  /** The walkthrough shown (id and revision), when the panel shows one. */
  private shownWalkthrough: { id: string; revision: number } | undefined;
  private walkthroughs: WalkthroughController | undefined;
  /** When a walkthrough last arrived live (this process's clock), for the diagrams' trace. */
  private walkthroughReceivedAt: number | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly store: ReviewStore,
    private readonly log: Log,
    private readonly onSeen: () => void,
  ) {
    this.disposables.push(
      store.onDidChange(({ review, live }) => {
        this.receivedAt.set(review.revision, Date.now());
        if (live) this.mode = 'review';
        if (this.panel) {
          this.render(true);
        } else if (live) {
          // An agent has just presented it: show it beside the editor without taking the focus.
          this.show(true);
        }
      }),
      store.onDidChangeHistory((base) => {
        // Only the menu changes: the review on screen is not rendered again.
        if (this.panel && this.ready && this.shown?.base_uri === base) this.post({ type: 'history', history: this.store.history(base) });
      }),
      vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
        deserializeWebviewPanel: async (panel: vscode.WebviewPanel) => {
          this.adopt(panel);
        },
      }),
    );
  }

  /** Shows walkthroughs from `walkthroughs` too. */
  useWalkthroughs(walkthroughs: WalkthroughController): void {
    this.walkthroughs = walkthroughs;
    this.disposables.push(
      walkthroughs.onDidChange(({ live }) => {
        if (live) {
          this.mode = 'walkthrough';
          this.walkthroughReceivedAt = Date.now();
        }
        if (this.panel) {
          if (this.mode === 'walkthrough' || !this.store.latest()) this.render(true);
        } else if (live) {
          this.show(true);
        }
      }),
      walkthroughs.onDidStep(({ label, block }) => {
        if (!this.panel) this.show(true);
        else if (!this.panel.visible) this.panel.reveal(undefined, true);
        if (this.mode !== 'walkthrough' || !this.shownWalkthrough) {
          this.mode = 'walkthrough';
          this.render(false);
        } else {
          this.post({ type: 'step', label, block });
        }
      }),
    );
  }

  /** The column files open in from the panel: the first, or the second when the panel is in the first (always the same one, so that moving through a walkthrough does not open column after column). */
  fileColumn(): vscode.ViewColumn {
    return this.panel?.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
  }

  /** `editor` was just opened from the panel: it keeps the focus if the panel takes it back at once. */
  keepFocus(editor: vscode.TextEditor): void {
    this.focusAfterOpen = { editor, until: Date.now() + 1000 };
  }

  get visible(): boolean {
    return this.panel?.visible ?? false;
  }

  get active(): boolean {
    return this.panel?.active ?? false;
  }

  /** The review currently displayed. */
  get displayed(): Review | undefined {
    return this.shown;
  }

  /** Opens (or reveals) the panel beside the editor. */
  show(preserveFocus: boolean): void {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      VIEW_TYPE,
      'Parley Review',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')] },
    );
    this.adopt(panel);
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    this.ready = false;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'parley.svg');
    panel.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    };
    panel.webview.html = this.html(panel.webview);
    panel.webview.onDidReceiveMessage((message: FromWebview) => this.receive(message), undefined, this.disposables);
    panel.onDidChangeViewState(() => {
      if (panel.visible) this.onSeen();
      // The click that opened a file can make the panel active again just after (the webview's focus
      // message arrives late): give the focus back to the file the user asked for.
      const target = this.focusAfterOpen;
      if (panel.active && target && Date.now() < target.until) {
        void vscode.window.showTextDocument(target.editor.document, { viewColumn: target.editor.viewColumn, selection: target.editor.selection });
      }
    }, undefined, this.disposables);
    panel.onDidDispose(() => {
      if (this.panel === panel) {
        this.panel = undefined;
        this.shown = undefined;
        this.selection = undefined;
      }
    }, undefined, this.disposables);
    this.onSeen();
  }

  private html(webview: vscode.Webview): string {
    const nonce = crypto.randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'review.css'));
    // VS Code's icons, from the font the extension ships (after review.css, whose fallback icon they override).
    const codicons = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'codicon.css'));
    // Loaded by the panel's script, with its nonce, only when a walkthrough has a diagram.
    const mermaid = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'mermaid.js'));
    // Nothing may load from anywhere but the extension, and only the one script with the nonce may run.
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<link rel="stylesheet" href="${codicons}">
<title>Parley Review</title>
</head>
<body data-mermaid="${mermaid}">
<div id="top">
<header id="header" hidden>
  <span id="title"></span>
  <a id="switch" role="link" tabindex="0" hidden></a>
  <label>History <select id="history" aria-label="Revision"></select></label>
</header>
<nav id="steps" hidden><button id="prev" title="Previous step (Parley: Previous Walkthrough Step)" aria-label="Previous step"><span class="codicon codicon-arrow-left" aria-hidden="true"></span></button> <span id="step-label"></span> <button id="next" title="Next step (Parley: Next Walkthrough Step)" aria-label="Next step"><span class="codicon codicon-arrow-right" aria-hidden="true"></span></button></nav>
</div>
<div id="banner" class="banner" hidden>You are reading an earlier revision<span id="banner-source"></span>. <a id="latest" role="link" tabindex="0">Show the newest</a></div>
<main id="content"><p class="empty">Loading…</p></main>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  private post(message: ToWebview): void {
    void this.panel?.webview.postMessage(message);
  }

  /** Shows the newest review (or the pinned revision) in the panel. */
  render(keepScroll: boolean): void {
    if (!this.panel || !this.ready) return;
    const latest = this.store.latest();
    const walkthrough = this.walkthroughs?.latest();
    if (walkthrough && (this.mode === 'walkthrough' || !latest)) {
      this.renderWalkthrough(keepScroll, latest !== undefined);
      return;
    }
    this.shownWalkthrough = undefined;
    if (!latest) {
      this.shown = undefined;
      this.post({ type: 'empty', message: 'No review yet. When an agent presents one (present_review or present_walkthrough), it appears here.' });
      return;
    }
    let review = latest;
    if (this.pinnedRevision !== undefined) {
      review = this.store.revision(latest.base_uri, this.pinnedRevision) ?? latest;
    }
    const sameReview = this.shown?.base_uri === review.base_uri;
    this.shown = review;
    const generation = ++this.generation;
    const message = {
      type: 'show' as const,
      baseUri: review.base_uri,
      revision: review.revision,
      updatedAt: review.updated_at,
      source: review.source?.label,
      history: this.store.history(review.base_uri),
      latest: review.revision === latest.revision,
      keepScroll: keepScroll && sameReview,
      other: walkthrough ? ('walkthrough' as const) : undefined,
    };
    // A long review is painted head first: rendering and laying out the whole takes hundreds of
    // milliseconds, its first screens a few. (The panel skips the head when the reader has scrolled
    // down, and keeps their place in the whole.)
    const head = reviewHead(review.content);
    this.log.trace('review-render', { revision: review.revision, lines: review.content.split('\n').length, head: head !== undefined });
    if (head === undefined) {
      this.post({ ...message, html: renderReview(review.content, review.references), partial: false });
    } else {
      this.post({ ...message, html: renderReview(head, review.references), partial: true });
      // The whole once the head is on screen (rendering it first would hold the head's message
      // back in this busy process), or after a moment if the panel does not say.
      let sent = false;
      const rest = () => {
        // Sent already, or another render has happened since: it shows something newer.
        if (sent || generation !== this.generation) return;
        sent = true;
        this.post({ ...message, html: renderReview(review.content, review.references), keepScroll: true, partial: false });
      };
      this.afterHead = rest;
      setTimeout(rest, HEAD_WAIT_MS);
    }
    if (this.panel.visible) this.onSeen();
  }

  /** Shows the newest walkthrough; `withReview`: a review is there too, for the header's link. */
  private renderWalkthrough(keepScroll: boolean, withReview: boolean): void {
    const walkthroughs = this.walkthroughs;
    const walkthrough = walkthroughs?.latest();
    if (!walkthroughs || !walkthrough) return;
    const same = this.shownWalkthrough?.id === walkthrough.id;
    this.shownWalkthrough = { id: walkthrough.id, revision: walkthrough.revision };
    const started = performance.now();
    const html = walkthroughs.html(walkthrough);
    const when = new Date(walkthrough.updated_at).toLocaleString();
    this.post({
      type: 'walkthrough',
      id: walkthrough.id,
      revision: walkthrough.revision,
      heading: `Walkthrough: ${walkthrough.title} · revision ${walkthrough.revision} · presented by ${walkthrough.presented_by} · ${when}`,
      html,
      keepScroll: keepScroll && same,
      step: walkthroughs.stepShown(),
      steps: walkthroughs.steps().length,
      other: withReview ? 'review' : undefined,
    });
    this.log.trace('walkthrough-render', { id: walkthrough.id, revision: walkthrough.revision, renderMs: performance.now() - started });
    if (this.panel?.visible) this.onSeen();
  }

  private receive(message: FromWebview): void {
    switch (message.type) {
      case 'ready':
        this.ready = true;
        this.render(false);
        break;
      case 'open':
        void this.openReference(message.revision, message.ref);
        break;
      case 'act':
        void this.walkthroughs?.act(message.id, message.block);
        break;
      case 'openPlace':
        if (this.shownWalkthrough) void this.walkthroughs?.openPlace(this.shownWalkthrough.id, message.block, message.place, message.candidate);
        break;
      case 'openDiffFile':
        if (this.shownWalkthrough) void this.walkthroughs?.openDiffFile(this.shownWalkthrough.id, message.block, message.file);
        break;
      case 'switch':
        this.mode = message.to;
        this.render(false);
        break;
      case 'stepBy':
        void this.walkthroughs?.stepBy(message.by);
        break;
      case 'diagrams': {
        const received = this.walkthroughReceivedAt;
        this.log.trace('walkthrough-diagrams', { id: message.id, revision: message.revision, drawn: message.drawn, failed: message.failed, webviewMs: message.ms, sinceReceived: received === undefined ? null : message.at - received });
        break;
      }
      case 'openExternal':
        if (isWebAddress(message.href)) void vscode.env.openExternal(vscode.Uri.parse(message.href));
        break;
      case 'showRevision': {
        const latest = this.store.latest();
        this.pinnedRevision = message.revision < 0 || message.revision === latest?.revision ? undefined : message.revision;
        const pinned = this.pinnedRevision;
        if (pinned !== undefined && latest && !this.store.revision(latest.base_uri, pinned)) {
          // A revision the daemon keeps but this window never held: show it once it has arrived.
          void this.store.load(latest.base_uri, pinned).then((found) => {
            if (!found) void vscode.window.showWarningMessage(`Parley: revision ${pinned} of the review could not be read from the daemon`);
            if (this.pinnedRevision === pinned) this.render(false);
          });
          break;
        }
        this.render(false);
        break;
      }
      case 'selection':
        this.selection = message.text === '' ? undefined : message;
        break;
      case 'painted': {
        if (!message.complete) {
          const rest = this.afterHead;
          this.afterHead = undefined;
          if (rest) setTimeout(rest, 0);
        }
        // The webview's wall clock: this process may have been busy when the message arrived.
        const received = this.receivedAt.get(message.revision);
        const sinceReceived = received === undefined ? null : message.at - received;
        if (message.first) this.log.trace('review-painted', { revision: message.revision, sinceReceived, webviewMs: message.ms, complete: message.complete });
        if (message.complete) this.log.trace('review-complete', { revision: message.revision, sinceReceived, webviewMs: message.ms });
        break;
      }
    }
  }

  /** Opens the file a reference names at its line, with its lines highlighted for a moment. */
  async openReference(revision: number, index: number): Promise<void> {
    const review = this.shown && this.shown.revision === revision ? this.shown : this.store.latest();
    const ref = this.shownWalkthrough ? this.walkthroughs?.latest()?.references[index] : review?.references[index];
    if (!ref) return;
    if (ref.resolved_path === undefined) {
      void vscode.window.showWarningMessage(`Parley: ${describeReference(ref)} cannot be opened: ${ref.problem ?? 'it did not resolve'}`);
      return;
    }
    const first = Math.max((ref.line ?? 1) - 1, 0);
    const last = Math.max((ref.end_line ?? ref.line ?? 1) - 1, first);
    const column = this.fileColumn();
    try {
      const document = await vscode.workspace.openTextDocument(vscode.Uri.file(ref.resolved_path));
      const lastLine = Math.min(last, document.lineCount - 1);
      const firstLine = Math.min(first, lastLine);
      const editor = await vscode.window.showTextDocument(document, {
        viewColumn: column,
        selection: new vscode.Range(firstLine, 0, firstLine, 0),
      });
      const range = new vscode.Range(firstLine, 0, lastLine, document.lineAt(lastLine).text.length);
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      this.keepFocus(editor);
      editor.setDecorations(highlight, [range]);
      setTimeout(() => editor.setDecorations(highlight, []), 3000);
      this.log.info(`opened ${describeReference(ref)} from the review`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Parley: cannot open ${ref.resolved_path}: ${(error as Error).message}`);
    }
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
