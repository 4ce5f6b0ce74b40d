/**
 * SQL over archives, measured against DuckDB reading the shipped Parquet in the same
 * run (`deno task bench` calls {@link sqlFigures}; alone:
 * `deno run -A bench/sql_bench.ts [flights-3m.parquet]`):
 *
 * - `SELECT origin, count(*), avg(delay) FROM flights GROUP BY 1`: wall time of a
 *   `SqlSession` query over the archive (it thaws the two columns named) vs DuckDB's
 *   `read_parquet` of the shipped file, median of 3 alternating runs, and the payload
 *   bytes the archive query read; and the same query on the `duckdb-wasm` engine;
 * - a `WHERE date BETWEEN …` query over about 1% of the rows: the share of the payload
 *   read (chunks whose min/max cannot match are skipped).
 *
 * The answers are compared (the same groups and counts, averages to 1e-9).
 *
 * @module
 */
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { freeze } from "../mod.ts";
import { SqlSession } from "../ops/sql.ts";
import { cellValue } from "../format/column.ts";
import { formatBytes } from "../internal/progress.ts";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const GROUP = "SELECT origin, count(*) AS n, avg(delay) AS d FROM flights GROUP BY 1 ORDER BY 1";
/** About 1% of flights-3m's rows: 1.8 days of the half-year. */
const RANGE = "SELECT count(*) AS n, avg(delay) AS d FROM flights " +
  "WHERE date BETWEEN TIMESTAMP '2001-03-01 00:00:00' AND TIMESTAMP '2001-03-02 19:00:00'";

/**
 * Measures the SQL figures on a Parquet file (frozen here with zstd).
 *
 * @param parquet The shipped Parquet file.
 * @returns Markdown lines.
 */
export async function sqlFigures(parquet: string): Promise<string[]> {
  const work = await Deno.makeTempDir({ prefix: "permafrost-sql-bench-" });
  const instance = await DuckDBInstance.create(":memory:");
  const duck = await instance.connect();
  try {
    const archive = join(work, "flights.pf");
    await freeze(parquet, archive, { codec: "zstd" });
    const session = new SqlSession();
    await session.register("flights", archive);
    const ours: number[] = [];
    const theirs: number[] = [];
    let bytesRead = 0;
    let payload = 0;
    let same = true;
    let nativeRows: unknown[][] = [];
    const direct = GROUP.replace("FROM flights", `FROM read_parquet('${parquet}')`);
    for (let round = 0; round < 3; round++) {
      let t = performance.now();
      const { value, scans } = await session.execute(GROUP, async ({ batches }) => {
        const rows: unknown[][] = [];
        for await (const b of batches) {
          for (let i = 0; i < b.length; i++) rows.push(b.columns.map((c) => cellValue(c, i)));
        }
        return rows;
      });
      ours.push(performance.now() - t);
      nativeRows = value;
      bytesRead = scans[0]!.bytes_read;
      payload = scans[0]!.payload_bytes;
      t = performance.now();
      const answer = (await duck.runAndReadAll(direct)).getRows();
      theirs.push(performance.now() - t);
      same &&= answer.length === value.length &&
        answer.every((r, i) =>
          String(r[0]) === String(value[i]![0]) && Number(r[1]) === Number(value[i]![1]) &&
          Math.abs(Number(r[2]) - Number(value[i]![2])) < 1e-9
        );
    }
    // The same query on the WebAssembly engine (its first query pays for instantiating it).
    const wasm = new SqlSession({ backend: "duckdb-wasm" });
    await wasm.register("flights", archive);
    const onWasm: number[] = [];
    for (let round = 0; round < 3; round++) {
      const t = performance.now();
      const { value } = await wasm.execute(GROUP, async ({ batches }) => {
        const rows: unknown[][] = [];
        for await (const b of batches) {
          for (let i = 0; i < b.length; i++) rows.push(b.columns.map((c) => cellValue(c, i)));
        }
        return rows;
      });
      onWasm.push(performance.now() - t);
      same &&= value.length === nativeRows.length &&
        value.every((r, i) =>
          r[0] === nativeRows[i]![0] && r[1] === nativeRows[i]![1] &&
          Math.abs(Number(r[2]) - Number(nativeRows[i]![2])) < 1e-9
        );
    }
    const range = await session.execute(RANGE, async ({ batches }) => {
      for await (const _ of batches) { /* one row */ }
    });
    const scan = range.scans[0]!;
    const a = median(ours) / 1000;
    const b = median(theirs) / 1000;
    return [
      `- \`${
        GROUP.replace(" ORDER BY 1", "")
      }\` on flights-3m (zstd archive), median of 3 alternating runs: ${
        a.toFixed(2)
      } s vs DuckDB on the shipped Parquet ${b.toFixed(2)} s (**${
        (a / b).toFixed(2)
      }×**); it read ${formatBytes(bytesRead)} of the ${
        formatBytes(payload)
      } payload (the two columns named). On the duckdb-wasm engine: ${
        (median(onWasm) / 1000).toFixed(2)
      } s (first run ${(onWasm[0]! / 1000).toFixed(2)} s, with its instantiation; **${
        (median(onWasm) / median(theirs)).toFixed(0)
      }×** DuckDB). Same answer: ${same}.`,
      `- \`WHERE date BETWEEN …\` (${
        scan.rows_loaded.toLocaleString("en-US")
      } rows, ~1%): ${scan.chunks_read} of ${scan.chunks_total} chunks read, **${
        (100 * scan.bytes_read / scan.payload_bytes).toFixed(1)
      }%** of the payload (${
        formatBytes(scan.bytes_read)
      }); filter taken from the query: \`${scan.pruned_by}\`.`,
    ];
  } finally {
    duck.closeSync();
    instance.closeSync();
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const parquet = Deno.args[0] ??
    "bench/.cache/vega-datasets-3.2.1/package/data/flights-3m.parquet";
  for (const line of await sqlFigures(parquet)) {
    Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
  }
}
