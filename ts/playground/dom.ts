// Small DOM helpers shared by the playground's panels.

/** An element with attributes (a `data-*` key sets a data attribute; 'text' sets the text) and children. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | number | boolean | null> = {},
  ...children: (Node | string | null)[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null) e.append(c);
  return e;
}

export const hex8 = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;
