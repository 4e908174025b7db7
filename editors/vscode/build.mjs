// Builds the extension with esbuild: dist/extension.js (Node, for the extension host; vscode is external), dist/webview.js (the review panel's script) and dist/mermaid.js (the diagrams' renderer, which the panel loads only for a walkthrough with diagrams), and copies VS Code's codicons (their font, stylesheet and licence) into dist/ for the panel's icons; with --tests, only the unit tests, under dist/test/unit/.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';

const tests = process.argv.includes('--tests');
const common = { bundle: true, sourcemap: true, minify: !tests, logLevel: 'warning', target: 'es2022' };

if (!tests) {
  await esbuild.build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', external: ['vscode'] });
  await esbuild.build({ ...common, entryPoints: ['src/webview/main.ts'], outfile: 'dist/webview.js', platform: 'browser', format: 'iife' });
  // Mermaid with everything it imports, in one file: the panel has no network and its policy admits only scripts with its nonce.
  await esbuild.build({ ...common, sourcemap: false, entryPoints: ['src/webview/mermaid.ts'], outfile: 'dist/mermaid.js', platform: 'browser', format: 'iife' });
  // The panel's icons are VS Code's own, drawn from the codicon font the extension ships: no emoji font needed.
  mkdirSync('dist', { recursive: true });
  const codicons = 'node_modules/@vscode/codicons';
  copyFileSync(`${codicons}/dist/codicon.css`, 'dist/codicon.css');
  copyFileSync(`${codicons}/dist/codicon.ttf`, 'dist/codicon.ttf');
  copyFileSync(`${codicons}/LICENSE`, 'dist/codicon-LICENSE.txt');
} else {
  const entryPoints = readdirSync('test/unit').filter((f) => f.endsWith('.test.ts')).map((f) => `test/unit/${f}`);
  // The TypeScript compiler stays a package the tests load (test/unit/wireTypes.test.ts type-checks with it).
  await esbuild.build({ ...common, entryPoints, outdir: 'dist/test/unit', platform: 'node', format: 'cjs', external: ['typescript'] });
}
