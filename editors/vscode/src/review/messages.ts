// The messages between the review panel's webview and the extension, typed once for both sides. Imports nothing from vscode.

/** One revision the window has seen, for the panel's history menu. */
export interface RevisionEntry {
  revision: number;
  updatedAt: string;
}

/** Extension → webview. */
export type ToWebview =
  | {
      type: 'show';
      /** The review's folder, shown in the header. */
      baseUri: string;
      revision: number;
      updatedAt: string;
      /** Rendered by the extension (src/review/render.ts): no raw HTML, no script, no remote content. */
      html: string;
      /** Newest first. */
      history: RevisionEntry[];
      /** Whether this is the newest revision (else a banner offers to go back to it). */
      latest: boolean;
      /** Keep the scroll position: the same review changed. */
      keepScroll: boolean;
      /** Only the review's first screens (render.ts, reviewHead): the whole follows in another `show`. */
      partial: boolean;
    }
  | { type: 'empty'; message: string };

/** Webview → extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'open'; revision: number; ref: number }
  | { type: 'openExternal'; href: string }
  | { type: 'showRevision'; revision: number }
  | { type: 'selection'; text: string; startLine: number; endLine: number }
  /** `first`: the revision's first paint in this panel (perhaps only its head); `complete`: the whole review is on screen. */
  | { type: 'painted'; revision: number; ms: number; first: boolean; complete: boolean; at: number };
