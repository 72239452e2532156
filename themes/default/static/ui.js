// DOM pieces of the page other than the canvas and the table: the tooltip and the clipboard.
// Text from the profile only ever goes into textContent.

/** Create an element with a class and text content. */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The hover tooltip: a name line and fact lines, positioned beside the pointer. */
export class Tooltip {
  constructor(node) {
    this.node = node;
  }

  show(clientX, clientY, name, facts) {
    const n = this.node;
    n.replaceChildren(el("div", "fs-tip-name", name), ...facts.map((f) => el("div", "", f)));
    n.hidden = false;
    const pad = 14;
    const w = n.offsetWidth;
    const h = n.offsetHeight;
    let x = clientX + pad;
    let y = clientY + pad;
    if (x + w > window.innerWidth - 4) x = Math.max(4, clientX - pad - w);
    if (y + h > window.innerHeight - 4) y = Math.max(4, clientY - pad - h);
    n.style.left = `${x}px`;
    n.style.top = `${y}px`;
  }

  hide() {
    this.node.hidden = true;
  }
}

/** Put text on the clipboard; falls back to a selected text field where the API is refused. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const t = el("textarea");
    t.value = text;
    t.setAttribute("readonly", "");
    t.style.position = "fixed";
    t.style.opacity = "0";
    document.body.append(t);
    t.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    t.remove();
    return ok;
  }
}
