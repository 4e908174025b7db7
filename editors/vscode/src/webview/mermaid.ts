// The mermaid bundled into the extension (dist/mermaid.js), loaded by the review panel's script only when a walkthrough has a diagram: it draws a diagram's source into an SVG without any network and under the panel's strict content security policy. Mermaid writes its styles as `style` attributes and a `<style>` element, which that policy blocks; they are moved into the CSS object model instead (an element's `style` property and a constructed style sheet), which the policy allows, so no 'unsafe-inline' is needed. Mermaid runs with securityLevel "strict" (labels are sanitised, no click handlers).

import mermaid from 'mermaid';

let initialised: 'dark' | 'default' | undefined;
let counter = 0;

/** Draws `source` into `host` (replacing what it holds); rejects with mermaid's own message when the source is not a diagram. */
async function draw(host: Element, source: string, dark: boolean): Promise<void> {
  const theme = dark ? 'dark' : 'default';
  if (initialised !== theme) {
    mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme, htmlLabels: false, flowchart: { htmlLabels: false } });
    initialised = theme;
  }
  const id = `parley-diagram-${++counter}`;
  // While mermaid measures its drawing in the page, its style attributes go through the CSS object model too.
  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (this: Element, name: string, value: string): void {
    if (name === 'style' && (this instanceof HTMLElement || this instanceof SVGElement)) this.style.cssText = value;
    else setAttribute.call(this, name, value);
  };
  let svg: string;
  try {
    svg = (await mermaid.render(id, source)).svg;
  } finally {
    Element.prototype.setAttribute = setAttribute;
    // A failed render leaves its scratch element behind.
    document.getElementById(`d${id}`)?.remove();
  }
  const parsed = new DOMParser().parseFromString(svg, 'image/svg+xml');
  if (parsed.documentElement.nodeName !== 'svg') throw new Error('mermaid gave no SVG');
  const root = document.importNode(parsed.documentElement, true);
  const css: string[] = [];
  for (const style of [...root.querySelectorAll('style')]) {
    css.push(style.textContent ?? '');
    style.remove();
  }
  for (const element of [root, ...root.querySelectorAll('[style]')]) {
    const text = element.getAttribute('style');
    if (text === null || !(element instanceof SVGElement || element instanceof HTMLElement)) continue;
    element.removeAttribute('style');
    element.style.cssText = text;
  }
  if (css.length > 0) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css.join('\n'));
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  }
  host.replaceChildren(root);
}

(globalThis as unknown as { parleyMermaid: unknown }).parleyMermaid = { draw };
