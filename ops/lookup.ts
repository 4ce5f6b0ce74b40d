/**
 * `lookup`: one row by primary key. The key column is declared at freeze
 * (`primaryKey`, recorded in the header, unique and never null), so a point
 * lookup is a `where key = value` whose footer min/max statistics skip every
 * chunk that cannot hold the key: on keys frozen in order that is one chunk
 * read, one block per requested column.
 *
 * @module
 */
import { cellValue } from "../format/column.ts";
import type { KeyRing } from "../format/key_provider.ts";
import { openArchive } from "./_remote.ts";
import { OpsError } from "./errors.ts";
import { newCounters, scanArchive } from "./_scan.ts";

/** What `lookup` found. */
export interface LookupResult {
  /** The row by column name (int64, timestamp and date as bigint ticks/days), or null when absent. */
  row: Record<string, bigint | number | boolean | string | null> | null;
  /** Chunks read (the others were skipped by their min/max). */
  chunks_read: number;
  /** Payload bytes read. */
  bytes_read: number;
}

/**
 * Finds the row whose primary key equals `key`.
 *
 * @param archive An archive frozen with a primary key.
 * @param key The key, as a value or as text read like a `--where` literal (`2001-02-01`).
 * @param options `columns` to return (default all); `keys` for an encrypted archive.
 * @returns The row (or null) and what was read.
 * @throws {OpsError} BAD_OPTION when the archive has no primary key or the key is not of its type.
 *
 * @example Look up an order by id
 * ```ts
 * import assert from "node:assert/strict";
 * import { tableFromArrays } from "apache-arrow";
 * import { freeze } from "./freeze.ts";
 * import { lookup } from "./lookup.ts";
 * const dir = await Deno.makeTempDir();
 * const orders = tableFromArrays({ id: BigInt64Array.of(10n, 11n, 12n), total: Float64Array.of(5, 7, 9) });
 * await freeze(orders, `${dir}/o.pf`, { primaryKey: "id", threads: 0, chunkRows: 1 });
 * const found = await lookup(`${dir}/o.pf`, 11n);
 * assert.deepEqual(found.row, { id: 11n, total: 7 });
 * assert.equal(found.chunks_read, 1);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function lookup(
  archive: string,
  key: bigint | number | boolean | string,
  options: { columns?: string[]; keys?: KeyRing } = {},
): Promise<LookupResult> {
  const reader = await openArchive(archive, { keys: options.keys, requireKey: true });
  try {
    const pk = reader.index.header.primary_key;
    if (pk === null) {
      throw new OpsError(
        "BAD_OPTION",
        `Cannot look up a key in '${archive}': it was frozen without a primary key (use thaw with a where filter)`,
      );
    }
    const counters = newCounters();
    const where = {
      kind: "cmp" as const,
      column: pk,
      op: "=" as const,
      value: { text: String(key), quoted: true },
    };
    let row: LookupResult["row"] = null;
    for await (const b of scanArchive(reader, { where, columns: options.columns }, counters)) {
      if (b.length === 0) continue;
      row = Object.fromEntries(b.schema.map((f, i) => [f.name, cellValue(b.columns[i]!, 0)]));
      break;
    }
    return { row, chunks_read: counters.chunks_read, bytes_read: counters.bytes_read };
  } finally {
    reader.close();
  }
}
