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
      /** A walkthrough is there too: the header offers to show it. */
      other?: 'walkthrough';
    }
  /** A walkthrough (src/review/walkthroughRender.ts), its diagrams to draw with the bundled mermaid. */
  | {
      type: 'walkthrough';
      id: string;
      revision: number;
      /** The header: title, revision, who presented it, when. */
      heading: string;
      html: string;
      keepScroll: boolean;
      /** The step shown, for the steps bar: `Step 2 of 7`, and the comment block to mark. */
      step?: { label: string; block: number };
      steps: number;
      /** A review is there too: the header offers to show it. */
      other?: 'review';
    }
  /** Marks comment block `block` as the current step and scrolls to it. */
  | { type: 'step'; label: string; block: number }
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
  | { type: 'painted'; revision: number; ms: number; first: boolean; complete: boolean; at: number }
  /** An action's button was clicked. */
  | { type: 'act'; id: string; block: number }
  /** A comment's place (`place`) or an unplaced comment's candidate (`candidate`) was clicked. */
  | { type: 'openPlace'; block: number; place?: number; candidate?: number }
  /** A file of a gitdiff block's list was clicked. */
  | { type: 'openDiffFile'; block: number; file: number }
  /** Show the walkthrough, or the review, instead. */
  | { type: 'switch'; to: 'review' | 'walkthrough' }
  /** The steps bar's previous or next. */
  | { type: 'stepBy'; by: 1 | -1 }
  /** The walkthrough's diagrams are drawn (or failed): its webview's clock, for the benchmark. */
  | { type: 'diagrams'; id: string; revision: number; drawn: number; failed: number; ms: number; at: number };
