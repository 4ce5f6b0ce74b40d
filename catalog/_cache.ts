/**
 * The catalog's memory of dataset records, for `Catalog.get` (so `GET
 * /datasets/{name}`). The catalog is the only writer of its file (`_db.ts`), so it
 * knows when a record changes: every committed write to a name calls
 * {@link RecordCache.written}, which drops that name's entries and bumps a
 * generation, and a read that started before a write (an older generation) is not
 * kept. At most {@link CACHE_NAMES} names are kept; the oldest goes first.
 *
 * @module
 */
import type { DatasetDetail } from "./types.ts";

/** Names whose records are kept (the oldest is dropped past this). */
export const CACHE_NAMES = 10_000;

/** Dataset records by name, then by version key (`""` = latest). */
export class RecordCache {
  #byName = new Map<string, Map<string, DatasetDetail>>();
  #generation = 0;

  /** Names kept. */
  get size(): number {
    return this.#byName.size;
  }

  /** The generation to pass back to {@link keep}: taken before a read starts. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * A copy of the record kept for a name and version key.
   *
   * @param name Dataset name.
   * @param key Version, or `""` for the latest.
   * @returns The copy, or undefined.
   */
  get(name: string, key: string): DatasetDetail | undefined {
    const hit = this.#byName.get(name)?.get(key);
    return hit ? structuredClone(hit) : undefined;
  }

  /**
   * Keeps a record read at `generation`, unless a write came since.
   *
   * @param name Dataset name.
   * @param key Version, or `""` for the latest.
   * @param detail The record read.
   * @param generation {@link generation} when the read started.
   * @returns The record for the caller (a copy when kept, so the kept one stays as read).
   */
  keep(name: string, key: string, detail: DatasetDetail, generation: number): DatasetDetail {
    if (generation !== this.#generation) return detail;
    let byVersion = this.#byName.get(name);
    if (!byVersion) {
      if (this.#byName.size >= CACHE_NAMES) this.#byName.delete(this.#byName.keys().next().value!);
      this.#byName.set(name, byVersion = new Map());
    }
    byVersion.set(key, detail);
    return structuredClone(detail);
  }

  /** Forgets everything (the catalog closed). */
  clear(): void {
    this.#generation++;
    this.#byName.clear();
  }

  /** Forgets a name's records after a committed write to it. */
  written(name: string): void {
    this.#generation++;
    this.#byName.delete(name);
  }
}
