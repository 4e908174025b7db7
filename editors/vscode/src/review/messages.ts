// The messages between the review panel's webview and the extension, typed once for both sides. Imports nothing from vscode.

/** One revision of the review, for the panel's history menu: those the daemon keeps, and any the window saw besides. */
export interface RevisionEntry {
  revision: number;
  updatedAt: string;
  /** Who made it ("presented by claude-code", "round 1 of review …"), when known. */
  source?: string;
}

/** Extension → webview. */
export type ToWebview =
  | {
      type: 'show';
      /** The review's folder, shown in the header. */
      baseUri: string;
      revision: number;
      updatedAt: string;
      /** Who made the revision shown, when known: the header says it, so a round's review is not taken for an agent's walkthrough. */
      source?: string;
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
  /** The history menu changed (the daemon's list was read again): the review shown stays. */
  | { type: 'history'; history: RevisionEntry[] }
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
