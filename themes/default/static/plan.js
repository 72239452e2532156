// Fetch planning: which files a view needs and which of them to ask for. A chunk can be drawn
// once it and the name files up to its `name_max` are in. One plan per render: it collects the
// chunks at hand, counts those still on the way and queues the fetches to start; the render
// decides when to start them (before or after its paint).

import { chunksAt, neededChunks } from "./layout.js";

/**
 * The state of the name files holding ids 0 ..= n of a NameTable: "ready", "failed" (one of
 * them failed) or "waiting", with `missing`, the indices of the files not yet in.
 */
export function namesStatus(table, n, failed) {
  const missing = table.missingUpTo(n);
  if (missing.length === 0) return { status: "ready", missing };
  if (missing.some((i) => failed(table.files[i]))) return { status: "failed", missing };
  return { status: "waiting", missing };
}

/** The chunk entries that may hold the zoomed frame `z` ({ depth, offset, total }). */
export function zoomChunks(manifest, z) {
  return chunksAt(manifest, z.depth, z.offset).filter((c) => c.max_total >= z.total);
}

export class FetchPlan {
  /** `g`: the graph ({ source, names, requested }); `arrived`: runs when an asked-for file is in (or failed). */
  constructor(g, arrived) {
    this.g = g;
    this.arrived = arrived;
    this.waiting = 0;
    this.fetches = [];
  }

  /** The decoded chunk of `entry` if it can be drawn now, else null (and the files it lacks are queued). */
  want(entry) {
    const g = this.g;
    const c = g.source.ready(entry);
    const n = entry.name_max === undefined ? g.names.count - 1 : entry.name_max;
    const names = namesStatus(g.names, n, (f) => g.source.failed(f));
    for (const i of names.status === "waiting" ? names.missing : []) this.ask(g.names.files[i].file, () => g.source.nameFile(g.names, i));
    if (c && names.status === "ready") return c;
    if (g.source.failed(entry) || names.status === "failed") return null;
    this.waiting += 1;
    if (!c) this.ask(entry.file, () => g.source.chunk(entry));
    return null;
  }

  /** The chunks of a view that can be drawn now. */
  chunks(view) {
    const ready = [];
    for (const entry of neededChunks(this.g.manifest, view)) {
      const c = this.want(entry);
      if (c) ready.push(c);
    }
    return ready;
  }

  ask(file, get) {
    if (this.g.requested.has(file)) return;
    this.g.requested.add(file);
    this.fetches.push(() => get().then(this.arrived, this.arrived));
  }

  /** Start the queued fetches. */
  start() {
    for (const f of this.fetches.splice(0)) f();
  }
}
