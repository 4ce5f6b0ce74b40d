/**
 * `diff`: what changed between two archives, at chunk resolution, from their
 * headers and footers only (no payload is read): chunk `i` of one is compared
 * with chunk `i` of the other by SHA-256. A chunk is `unchanged` when its hash
 * and row range are equal, `changed` otherwise; chunks past the end of the
 * shorter archive are `added` (only in `b`) or `removed` (only in `a`).
 *
 * Positional comparison fits how archives change: `append` keeps every chunk
 * and adds new ones at the end, and a re-freeze of the same rows with the same
 * options writes the same bytes. Rows inserted or deleted in the middle shift
 * every later chunk, which then shows as changed. A different codec, plan or
 * chunk size changes every block's bytes, so the header differences are listed
 * too, to explain a diff where every chunk changed.
 *
 * @module
 */
import type { Field } from "../format/column.ts";
import type { ChunkEntry } from "../format/header.ts";
import { readIndexAt } from "./_remote.ts";
import { type SchemaDiff, schemaDiff, typeText } from "./schema_diff.ts";

/** How one chunk position compares. */
export type ChunkStatus = "unchanged" | "changed" | "added" | "removed";

/** One side of a compared chunk. */
export interface DiffSide {
  /** First row (inclusive). */
  row_start: number;
  /** Last row (exclusive). */
  row_end: number;
  /** SHA-256 (hex) of the chunk's stored bytes. */
  sha256: string;
}

/** One chunk position in a diff. */
export interface ChunkDiff {
  /** Chunk index. */
  index: number;
  /** How it compares. */
  status: ChunkStatus;
  /** The chunk in `a` (null when added). */
  a: DiffSide | null;
  /** The chunk in `b` (null when removed). */
  b: DiffSide | null;
}

/** What `diff` found. */
export interface DiffReport {
  /** Path of the first archive. */
  a: string;
  /** Path of the second archive. */
  b: string;
  /** True when header and payload hashes are equal. */
  identical: boolean;
  /** Rows in `a`. */
  rows_a: number;
  /** Rows in `b`. */
  rows_b: number;
  /** Header differences (schema, codec, chunk rows, plans, primary key), as sentences. */
  header_changes: string[];
  /** The schema's changes, column by column, each with whether it is compatible. */
  schema: SchemaDiff;
  /** Chunk counts by status. */
  summary: Record<ChunkStatus, number>;
  /** Every chunk position, in order. */
  chunks: ChunkDiff[];
}

/**
 * Compares two archives chunk by chunk using the per-chunk hashes in their footers.
 *
 * @param a The first (older) archive.
 * @param b The second (newer) archive.
 * @returns Unchanged, changed, added and removed chunks with their row ranges.
 * @throws {FormatError} When either archive's header or footer is unreadable.
 *
 * @example Diff an archive with itself
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableFromArrays } from "apache-arrow";
 * import { diff } from "./diff.ts";
 * import { freeze } from "./freeze.ts";
 * const dir = await Deno.makeTempDir();
 * await freeze(tableFromArrays({ n: Float64Array.of(1, 2) }), `${dir}/t.pf`, { threads: 0 });
 * const report = await diff(`${dir}/t.pf`, `${dir}/t.pf`);
 * assert.equal(report.identical, true);
 * assert.deepEqual(report.summary, { unchanged: 1, changed: 0, added: 0, removed: 0 });
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function diff(a: string, b: string): Promise<DiffReport> {
  const [ia, ib] = await Promise.all([readIndexAt(a), readIndexAt(b)]);
  const ca = ia.footer.chunks;
  const cb = ib.footer.chunks;
  const summary: Record<ChunkStatus, number> = { unchanged: 0, changed: 0, added: 0, removed: 0 };
  const chunks: ChunkDiff[] = [];
  for (let i = 0; i < Math.max(ca.length, cb.length); i++) {
    const x = ca[i];
    const y = cb[i];
    const status: ChunkStatus = !x
      ? "added"
      : !y
      ? "removed"
      : x.sha256 === y.sha256 && x.row_start === y.row_start && x.row_end === y.row_end
      ? "unchanged"
      : "changed";
    summary[status]++;
    chunks.push({ index: i, status, a: side(x), b: side(y) });
  }
  const header_changes: string[] = [];
  const fields = (s: readonly Field[]) => new Map(s.map((f) => [f.name, f]));
  const fa = fields(ia.schema);
  const fb = fields(ib.schema);
  for (const [name, f] of fa) {
    const g = fb.get(name);
    if (!g) header_changes.push(`column "${name}" removed`);
    else if (typeText(f) !== typeText(g)) {
      header_changes.push(`column "${name}" type ${typeText(f)} -> ${typeText(g)}`);
    }
  }
  for (const name of fb.keys()) if (!fa.has(name)) header_changes.push(`column "${name}" added`);
  if (
    [...fa.keys()].filter((n) => fb.has(n)).join("\u0000") !==
      [...fb.keys()].filter((n) => fa.has(n)).join("\u0000")
  ) header_changes.push("column order changed");
  const ha = ia.header;
  const hb = ib.header;
  if (ha.codec !== hb.codec) header_changes.push(`codec ${ha.codec} -> ${hb.codec}`);
  if (ha.chunk_rows !== hb.chunk_rows) {
    header_changes.push(`chunk rows ${ha.chunk_rows} -> ${hb.chunk_rows}`);
  }
  if (ha.primary_key !== hb.primary_key) {
    header_changes.push(`primary key ${ha.primary_key ?? "none"} -> ${hb.primary_key ?? "none"}`);
  }
  for (const [name] of fa) {
    const pa = ha.columns[name];
    const pb = hb.columns[name];
    if (pa && pb && JSON.stringify(pa) !== JSON.stringify(pb)) {
      header_changes.push(`column "${name}" plan ${JSON.stringify(pa)} -> ${JSON.stringify(pb)}`);
    }
  }
  return {
    a,
    b,
    identical: ia.header_sha256 === ib.header_sha256 &&
      ia.footer.payload_sha256 === ib.footer.payload_sha256,
    rows_a: ia.footer.rows,
    rows_b: ib.footer.rows,
    header_changes,
    schema: schemaDiff(ia.schema, ib.schema),
    summary,
    chunks,
  };
}

function side(c: ChunkEntry | undefined): DiffSide | null {
  return c ? { row_start: c.row_start, row_end: c.row_end, sha256: c.sha256 } : null;
}

/**
 * Formats a diff report for people: a summary line, header changes, then one
 * line per chunk that is not unchanged (runs of unchanged chunks are counted).
 *
 * @param report What `diff` returned.
 * @returns Lines of text.
 */
export function formatDiff(report: DiffReport): string {
  const s = report.summary;
  const lines = [
    `${report.a} -> ${report.b}: ${
      report.identical ? "identical" : "differ"
    } (rows ${report.rows_a} -> ${report.rows_b}; chunks: ${s.unchanged} unchanged, ${s.changed} changed, ${s.added} added, ${s.removed} removed)`,
  ];
  for (const h of report.header_changes) lines.push(`header   ${h}`);
  for (const c of report.schema.changes.filter((x) => !x.compatible)) {
    lines.push(
      `schema   column "${c.column}" ${c.kind.replace("_", " ")} is not compatible: ${c.reason}`,
    );
  }
  const range = (x: DiffSide | null) => (x ? `rows ${x.row_start}..${x.row_end}` : "");
  let same = 0;
  const flush = () => {
    if (same > 0) lines.push(`         (${same} unchanged chunk${same === 1 ? "" : "s"})`);
    same = 0;
  };
  for (const c of report.chunks) {
    if (c.status === "unchanged") {
      same++;
      continue;
    }
    flush();
    const where = c.status === "changed"
      ? `${range(c.a)}${
        c.a!.row_start === c.b!.row_start && c.a!.row_end === c.b!.row_end
          ? ""
          : ` -> ${range(c.b)}`
      }`
      : range(c.a ?? c.b);
    lines.push(`${c.status.padEnd(8)} chunk ${c.index}  ${where}`);
  }
  flush();
  return lines.join("\n");
}
