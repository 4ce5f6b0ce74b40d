/**
 * Catalog search: names, versions, column names and descriptions scored per query
 * word in SQL, one hit per name (its best version), best first. `Catalog.search` runs it.
 *
 * @module
 */
import type { SqlParam } from "./store.ts";
import { CatalogError } from "./errors.ts";
import type { SearchHit, SearchResult } from "./types.ts";

/** Runs a read-only query with parameters on the catalog's tables. */
export type ReadQuery = (sql: string, params: SqlParam[]) => Promise<Record<string, unknown>[]>;

/**
 * Searches the catalog.
 *
 * Per query word: name equal 100, name starts with it 60, contains it 40; version
 * equal 30, contains 15; a column named it 25, a column containing it 12; description
 * containing it 8. A newer version wins a tie.
 *
 * @param read Runs a query.
 * @param q Words to look for (case-insensitive; at most 8 are used).
 * @param page Paging, already checked.
 * @returns The hits.
 * @throws {CatalogError} INVALID_ARGUMENT for an empty query.
 */
export async function searchDatasets(
  read: ReadQuery,
  q: string,
  page: { limit: number; offset: number },
): Promise<SearchResult> {
  const { limit, offset } = page;
  const terms = [...new Set(q.toLowerCase().split(/\s+/).filter((t) => t !== ""))].slice(0, 8);
  if (terms.length === 0) throw new CatalogError("INVALID_ARGUMENT", "Search query 'q' is empty");
  const parts = terms.map((_, i) => {
    const p = `$${i + 1}`;
    return `(CASE WHEN lower(name) = ${p} THEN 100 WHEN starts_with(lower(name), ${p}) THEN 60
        WHEN contains(lower(name), ${p}) THEN 40 ELSE 0 END
      + CASE WHEN lower(version) = ${p} THEN 30 WHEN contains(lower(version), ${p}) THEN 15 ELSE 0 END
      + CASE WHEN list_contains(list_transform(column_names, lambda c: lower(c)), ${p}) THEN 25
        WHEN len(list_filter(column_names, lambda c: contains(lower(c), ${p}))) > 0 THEN 12 ELSE 0 END
      + CASE WHEN contains(lower(description), ${p}) THEN 8 ELSE 0 END)`;
  });
  const scored = `SELECT name, version, description, rows, codec, column_names, seq, ${
    parts.join(" + ")
  } AS score
    FROM datasets`;
  const best = `SELECT * FROM (${scored}) WHERE score > 0
    QUALIFY row_number() OVER (PARTITION BY name ORDER BY score DESC, seq DESC) = 1`;
  const total = Number(
    (await read(`SELECT count(*) AS n FROM (${best})`, terms))[0]?.n ?? 0,
  );
  const rows = await read(
    `SELECT * FROM (${best}) ORDER BY score DESC, name LIMIT ${limit} OFFSET ${offset}`,
    terms,
  );
  const items: SearchHit[] = rows.map((r) => {
    const name = String(r.name);
    const version = String(r.version);
    const description = String(r.description);
    const columns = (r.column_names as string[]) ?? [];
    const matched: string[] = [];
    const has = (s: string) => terms.some((t) => s.toLowerCase().includes(t));
    if (has(name)) matched.push("name");
    if (has(version)) matched.push("version");
    for (const c of columns) if (has(c)) matched.push(`column:${c}`);
    if (has(description)) matched.push("description");
    return {
      name,
      version,
      score: Number(r.score),
      matched,
      description,
      rows: Number(r.rows),
      codec: String(r.codec),
    };
  });
  return { q, items, total };
}
