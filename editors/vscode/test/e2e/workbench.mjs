// Page objects for code-server's workbench, so the scenarios read as what a user does: run a command, read the status bar, click in the review panel, comment from the gutter.

import { until } from './sandbox.mjs';

export class Workbench {
  constructor(page) {
    this.page = page;
  }

  async open(url) {
    await this.page.goto(url);
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    // Marks this page load: a reload would lose it.
    await this.page.evaluate(() => {
      window.__parleyLoad = 'first';
    });
  }

  async stillTheSameLoad() {
    return (await this.page.evaluate(() => window.__parleyLoad)) === 'first';
  }

  /** The Parley status bar item's text. */
  async parleyStatus() {
    return (await this.page.locator('.statusbar-item', { hasText: 'Parley' }).first().textContent({ timeout: 5000 }))?.trim() ?? '';
  }

  async waitForStatus(pattern, ms = 30_000) {
    return until(`the status bar to match ${pattern}`, async () => pattern.test(await this.parleyStatus()), ms);
  }

  /** The cursor position item, "Ln 3, Col 1" (with "(N selected)"). */
  async cursorStatus() {
    return (await this.page.locator('[id="status.editor.selection"]').textContent({ timeout: 5000 }))?.trim() ?? '';
  }

  async runCommand(title) {
    const input = this.page.locator('.quick-input-widget input');
    // A busy workbench can miss the key: press it again until the palette opens.
    await until('the command palette to open', async () => {
      await this.page.keyboard.press('F1');
      await input.waitFor({ timeout: 3000 }).catch(() => {});
      return input.isVisible();
    }, 30_000);
    await input.fill(`>${title}`);
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
    await this.page.keyboard.press('Enter');
  }

  /** Opens `file` (a path in the workspace) with Quick Open. */
  async openFile(file) {
    const input = this.page.locator('.quick-input-widget input');
    await until('Quick Open to open', async () => {
      await this.page.keyboard.press('Control+p');
      await input.waitFor({ timeout: 3000 }).catch(() => {});
      return input.isVisible();
    }, 30_000);
    await input.fill(file);
    // The focused row, which Enter opens: until the list is filtered, it can be a recently opened file.
    const name = file.split('/').at(-1);
    await this.page.locator('.quick-input-list .monaco-list-row.focused', { hasText: name }).first().waitFor();
    await this.page.keyboard.press('Enter');
    await until(`${name} to be the active tab`, async () => (await this.activeTab()).includes(name));
  }

  /** Moves the cursor of the active editor to `line` (1-based), scrolling it into view. */
  async goToLine(line) {
    await this.page.keyboard.press('Control+p');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 5000 });
    await input.fill(`:${line}`);
    // Enter goes to the line only once the picker offers it: pressed before,
    // under load, it is lost.
    const offer = this.page.locator('.quick-input-list .monaco-list-row.focused', {
      hasText: new RegExp(`go to line ${line}\\b`),
    });
    await offer.first().waitFor({ timeout: 5000 });
    await this.page.keyboard.press('Enter');
    await until(`the cursor on line ${line}`, async () => new RegExp(`Ln ${line},`).test(await this.cursorStatus()));
  }

  /** The review panel's document, inside the webview's nested frames. */
  review() {
    return this.page.frameLocator('iframe.webview').frameLocator('#active-frame');
  }

  async activeTab() {
    return (await this.page.locator('.editor-group-container.active .tab.active').first().textContent({ timeout: 5000 }))?.trim() ?? '';
  }

  /**
   * The active editor, or in a diff editor its `original` (left) or `modified` (right) side.
   */
  editor(side) {
    const group = this.page.locator('.editor-group-container.active');
    if (side === undefined) return group.locator('.monaco-editor').first();
    return group.locator(`.monaco-diff-editor .monaco-editor.${side}-in-monaco-diff-editor`).first();
  }

  /** Hovers line `line` (1-based) of the active editor (`side` of a diff editor) and clicks the comment "+" in its gutter. */
  async clickCommentGutter(line, side) {
    const editor = this.editor(side);
    const number = editor.locator('.line-numbers', { hasText: new RegExp(`^${line}$`) }).first();
    const box = await number.boundingBox();
    if (!box) throw new Error(`line ${line} is not visible`);
    // Every line of a commenting range has a glyph in the margin right of the line numbers; the hovered one shows a "+".
    await this.page.mouse.move(box.x + box.width + 10, box.y + box.height / 2);
    const glyph = await editor.locator('.comment-range-glyph').first().boundingBox({ timeout: 10_000 });
    if (!glyph) throw new Error('no comment glyphs in the margin: the file has no commenting range');
    const x = glyph.x + glyph.width / 2;
    const y = box.y + box.height / 2;
    await this.page.mouse.move(x, y);
    await this.page.mouse.click(x, y);
  }

  /**
   * Types `text` into the open comment widget's editor and presses its button named `button`.
   * Text with several lines is inserted whole, as a paste would, so that the editor's
   * auto-closing of backticks and auto-indent leave it as written.
   */
  async submitComment(text, button) {
    const widget = this.page.locator('.review-widget').last();
    const input = widget.locator('.comment-form .monaco-editor, .comment-form textarea').first();
    await input.waitFor({ timeout: 10_000 });
    await input.click();
    if (text.includes('\n') || text.includes('`')) await this.page.keyboard.insertText(text);
    else await this.page.keyboard.type(text);
    await widget.getByRole('button', { name: button }).first().click();
  }

  /** The notification toast whose text matches `text`. */
  toast(text) {
    return this.page.locator('.notifications-toasts .notification-toast', { hasText: text });
  }

  /** Picks the row `label` of the open quick pick. */
  async pick(label) {
    const row = this.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: label }).first();
    await row.waitFor({ timeout: 10_000 });
    await row.click();
  }

  /** Types `text` into the open input box and presses Enter. */
  async answer(text) {
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 10_000 });
    await input.fill(text);
    await this.page.keyboard.press('Enter');
  }

  /** A view's pane in the side bar, by its title ("Parley Review"). */
  pane(title) {
    return this.page.locator('.pane', { has: this.page.locator('.pane-header', { hasText: title }) }).first();
  }

  /** The 1-based lines of the active editor whose margin shows a comment thread's glyph. */
  async threadGlyphLines() {
    return this.page.evaluate(() => {
      const group = document.querySelector('.editor-group-container.active');
      if (!group) return [];
      const numbers = [...group.querySelectorAll('.line-numbers')].map((e) => ({ line: Number(e.textContent), y: Math.round(e.getBoundingClientRect().y) }));
      return [...group.querySelectorAll('.comment-range-glyph.comment-thread, .comment-range-glyph.comment-thread-unresolved')]
        .map((g) => numbers.find((n) => Math.abs(n.y - Math.round(g.getBoundingClientRect().y)) < 3)?.line)
        .filter((line) => line !== undefined)
        .sort((a, b) => a - b);
    });
  }

  /** Clicks the thread glyph on `line` (1-based), which opens or closes the thread. */
  async toggleThreadAt(line) {
    const y = await this.page.evaluate((wanted) => {
      const group = document.querySelector('.editor-group-container.active');
      const number = [...(group?.querySelectorAll('.line-numbers') ?? [])].find((e) => Number(e.textContent) === wanted);
      return number ? number.getBoundingClientRect().y + number.getBoundingClientRect().height / 2 : undefined;
    }, line);
    if (y === undefined) throw new Error(`line ${line} is not visible`);
    const glyph = this.page.locator('.editor-group-container.active .comment-range-glyph.comment-thread, .editor-group-container.active .comment-range-glyph.comment-thread-unresolved').first();
    // The glyphs are drawn again as threads arrive: one may be gone between
    // finding it and measuring it.
    const box = await until('a thread glyph to click', () => glyph.boundingBox({ timeout: 1000 }).catch(() => null), 10_000);
    await this.page.mouse.click(box.x + box.width / 2, y);
  }

  /**
   * Clicks the action `name` (Resolve, Reopen) in the header of the thread on `line`
   * (1-based), first opening the thread by clicking its glyph when it is folded.
   */
  async threadAction(line, name) {
    const action = this.page.locator(`.review-widget .head a.action-label[aria-label="${name}"]`).first();
    await until(`the ${name} action of the thread on line ${line}`, async () => {
      if (!(await action.isVisible())) {
        await this.toggleThreadAt(line);
        await action.waitFor({ state: 'visible', timeout: 1500 }).catch(() => {});
      }
      await action.click({ timeout: 1000 });
      return true;
    });
  }

  /** The text of the built-in Comments panel. */
  async commentsPanel() {
    return this.page.locator('.comments-panel').first().textContent({ timeout: 5000 });
  }

  threadWidgets() {
    return this.page.locator('.review-widget');
  }

  async screenshot(file) {
    await this.page.screenshot({ path: file });
  }
}
