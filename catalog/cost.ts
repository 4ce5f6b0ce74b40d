/**
 * What the catalog costs and holds: totals over every version (`GET /stats`) and the
 * monthly storage cost by storage class with the savings against raw and Parquet-size
 * storage (`GET /cost_report`). Queries go through the `read` function the catalog
 * passes in; the arithmetic (prices per GB-month of 2^30 bytes, six significant digits
 * for money) lives here.
 *
 * @module
 */
import type { CatalogStats, CostLine, CostReport, StatsGroup } from "./types.ts";

/** Runs a read-only query on the catalog's tables. */
export type ReadRows = (sql: string) => Promise<Record<string, unknown>[]>;

/** Storage prices, $/GB-month by storage class (cloud object storage list prices). */
export const DEFAULT_PRICES: Readonly<Record<string, number>> = Object.freeze({
  standard: 0.023,
  infrequent: 0.0125,
  archive: 0.0036,
  deep_archive: 0.00099,
});

/**
 * The catalog's storage class for an object store's class or tier, by price band:
 * S3 `STANDARD`/`STANDARD_IA`/`GLACIER_IR`/`DEEP_ARCHIVE`, Azure `Hot`/`Cool`/`Cold`/
 * `Archive`, GCS `STANDARD`/`NEARLINE`/`COLDLINE`/`ARCHIVE`.
 *
 * @param objectClass The store's class (case ignored).
 * @returns `standard`, `infrequent`, `archive` or `deep_archive`; null when unknown.
 */
export function priceClassOf(objectClass: string | null): string | null {
  switch (objectClass?.toUpperCase()) {
    case "STANDARD":
    case "HOT":
    case "REDUCED_REDUNDANCY":
      return "standard";
    case "STANDARD_IA":
    case "ONEZONE_IA":
    case "INTELLIGENT_TIERING":
    case "NEARLINE":
    case "COOL":
      return "infrequent";
    case "GLACIER_IR":
    case "GLACIER":
    case "COLDLINE":
    case "COLD":
      return "archive";
    case "DEEP_ARCHIVE":
    case "ARCHIVE":
      return "deep_archive";
    default:
      return null;
  }
}

/** Assumed size of the same data as Snappy Parquet, as a fraction of the raw column bytes. */
export const DEFAULT_PARQUET_RATIO = 0.35;

/** Bytes in a billing GB. */
export const GB_BYTES = 2 ** 30;

/**
 * Totals over the catalog: datasets, versions, rows, raw vs stored bytes, ratio by codec
 * and by storage class.
 *
 * @param read Runs a query on the catalog's tables.
 * @returns The totals.
 */
export async function catalogStats(read: ReadRows): Promise<CatalogStats> {
  const group = `count(*) AS versions, coalesce(sum(rows), 0) AS rows,
    coalesce(sum(raw_bytes), 0) AS raw_bytes, coalesce(sum(stored_bytes), 0) AS stored_bytes`;
  const [totals] = await read(
    `SELECT ${group}, count(DISTINCT name) AS datasets, coalesce(sum(chunks), 0) AS chunks,
      coalesce(sum(file_bytes), 0) AS file_bytes FROM datasets`,
  );
  const codecs = await read(
    `SELECT codec, ${group} FROM datasets GROUP BY codec ORDER BY codec`,
  );
  const classes = await read(
    `SELECT storage_class, ${group} FROM datasets GROUP BY storage_class ORDER BY storage_class`,
  );
  const t = totals ?? {};
  return {
    datasets: Number(t.datasets ?? 0),
    ...statsGroup(t),
    chunks: Number(t.chunks ?? 0),
    file_bytes: Number(t.file_bytes ?? 0),
    by_codec: codecs.map((r) => ({ codec: String(r.codec), ...statsGroup(r) })),
    by_storage_class: classes.map((r) => ({
      storage_class: String(r.storage_class),
      ...statsGroup(r),
    })),
  };
}

/**
 * Monthly storage cost of every version, by storage class, with the savings against
 * storing the raw bytes and against a Parquet-size estimate.
 *
 * @param read Runs a query on the catalog's tables.
 * @param prices $/GB-month by storage class.
 * @param parquetRatio Assumed Parquet size as a fraction of raw bytes.
 * @returns The report.
 */
export async function costReport(
  read: ReadRows,
  prices: Readonly<Record<string, number>>,
  parquetRatio: number,
): Promise<CostReport> {
  const ratio = parquetRatio;
  const rows = await read(
    `SELECT storage_class, count(*) AS versions, sum(stored_bytes) AS stored_bytes, sum(raw_bytes) AS raw_bytes
     FROM datasets GROUP BY storage_class ORDER BY storage_class`,
  );
  const money = (bytes: number, price: number | null) =>
    price === null ? null : significant((bytes / GB_BYTES) * price);
  const lines: CostLine[] = rows.map((r) => {
    const price = prices[String(r.storage_class)] ?? null;
    const stored = Number(r.stored_bytes);
    const raw = Number(r.raw_bytes);
    const parquet = Math.round(raw * ratio);
    return {
      storage_class: String(r.storage_class),
      price_per_gb_month: price,
      versions: Number(r.versions),
      stored_bytes: stored,
      raw_bytes: raw,
      parquet_bytes_estimate: parquet,
      monthly_cost: money(stored, price),
      raw_monthly_cost: money(raw, price),
      parquet_monthly_cost: money(parquet, price),
    };
  });
  const priced = lines.filter((l) => l.price_per_gb_month !== null);
  const sum = (f: (l: CostLine) => number | null) => priced.reduce((s, l) => s + (f(l) ?? 0), 0);
  const cost = sum((l) => l.monthly_cost);
  const raw = sum((l) => l.raw_monthly_cost);
  const parquet = sum((l) => l.parquet_monthly_cost);
  const pct = (saved: number, of: number) => (of > 0 ? round((saved / of) * 100, 2) : null);
  return {
    currency: "USD",
    gb_bytes: GB_BYTES,
    prices: { ...prices },
    parquet_ratio: ratio,
    storage_classes: lines,
    total: {
      stored_bytes: priced.reduce((s, l) => s + l.stored_bytes, 0),
      raw_bytes: priced.reduce((s, l) => s + l.raw_bytes, 0),
      parquet_bytes_estimate: priced.reduce((s, l) => s + l.parquet_bytes_estimate, 0),
      monthly_cost: significant(cost),
      raw_monthly_cost: significant(raw),
      parquet_monthly_cost: significant(parquet),
      savings_vs_raw: significant(raw - cost),
      savings_vs_parquet: significant(parquet - cost),
      savings_vs_raw_pct: pct(raw - cost, raw),
      savings_vs_parquet_pct: pct(parquet - cost, parquet),
    },
  };
}

/** One group's totals from a row of sums. */
export function statsGroup(r: Record<string, unknown>): StatsGroup {
  const raw = Number(r.raw_bytes ?? 0);
  const stored = Number(r.stored_bytes ?? 0);
  return {
    versions: Number(r.versions ?? 0),
    rows: Number(r.rows ?? 0),
    raw_bytes: raw,
    stored_bytes: stored,
    ratio: stored > 0 ? round(raw / stored, 4) : null,
  };
}

/** Money: six significant digits, so tiny test catalogs do not round to 0. */
function significant(x: number): number {
  return x === 0 ? 0 : Number(x.toPrecision(6));
}

export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
