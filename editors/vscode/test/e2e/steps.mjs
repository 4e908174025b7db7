// The step runner the end-to-end scenarios share: each step prints `ok`/`FAIL` with its time and leaves a screenshot named after it (what the person saw); the first failure, or the run overrunning its time, ends the run with `N passed, N failed` and exit code 1. The sandbox's directory is kept after a failure (or with PARLEY_E2E_KEEP=1).

import * as path from 'node:path';

export class StepRun {
  /**
   * @param sandbox the scenario's Sandbox (its `dir`, `shots` and `close`)
   * @param timeoutMs how long the whole run may take
   * @param kept what a kept directory holds, for the message that names it
   */
  constructor(sandbox, timeoutMs, kept) {
    this.sandbox = sandbox;
    this.kept = kept;
    this.passed = 0;
    this.failed = 0;
    /** The Workbench, once the browser is open: screenshots come from it. */
    this.workbench = undefined;
    setTimeout(() => {
      console.log(`FAIL the run finishes within ${timeoutMs / 1000} s: it hung`);
      this.failed++;
      void this.finish();
    }, timeoutMs).unref();
  }

  /** Runs one step; takes a screenshot named after it, and on failure ends the run. */
  async step(name, body) {
    const started = Date.now();
    const number = this.passed + this.failed + 1;
    const shot = (suffix) => path.join(this.sandbox.shots, `${String(number).padStart(2, '0')}-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}${suffix}.png`);
    try {
      await body();
      this.passed++;
      console.log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      if (this.workbench) await this.workbench.screenshot(shot('')).catch(() => {});
    } catch (error) {
      this.failed++;
      console.log(`FAIL ${name}: ${error?.stack ?? error}`);
      if (this.workbench) await this.workbench.screenshot(shot('-failure')).catch(() => {});
      await this.finish();
    }
  }

  /** Prints the totals, closes the sandbox and exits. */
  async finish() {
    console.log(`${this.passed} passed, ${this.failed} failed`);
    const keep = this.failed > 0 || process.env.PARLEY_E2E_KEEP === '1';
    if (keep) console.log(`screenshots and logs kept in ${this.sandbox.dir} (${this.kept})`);
    await this.sandbox.close({ keep });
    process.exit(this.failed === 0 ? 0 : 1);
  }
}

export function expect(ok, message) {
  if (!ok) throw new Error(message);
}
