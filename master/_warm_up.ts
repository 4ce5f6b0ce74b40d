/**
 * The master's warm-up: once, as it starts, it runs a small built-in CSV table
 * through a job's two phases that run alone on the master while the workers wait
 * (`prepare.ts`: layout, dialect, schema, first chunk, plan; `_assembly.ts`: chunks
 * read back from their wire form and written as an archive), so a fresh master's
 * first job does not pay for compiling that code. Each of those runs once per job,
 * so one pass compiles what a first job would: the CPU is spent earlier, not added.
 * The table and its archive live in `<data dir>/warm-up/` (one master per data
 * directory: its job store's lock), removed when done, and first if a master
 * stopped mid-way left it.
 *
 * @module
 */
import { join } from "node:path";
import { ArchiveWriter } from "../format/writer.ts";
import { newArchiveHeader } from "../format/new_archive.ts";
import type { Schema } from "../format/column.ts";
import type { ColumnPlan } from "../format/header.ts";
import { encodeChunk } from "../format/chunk.ts";
import { readTaskRows } from "../cluster/task_source.ts";
import { decodeChunkBody, encodeChunkBody } from "../cluster/wire.ts";
import { WARM_UP_HEADER, warmUpRows } from "../cluster/warm_up_table.ts";
import { openedIdentity } from "../internal/file_identity.ts";
import { prepareJob } from "./prepare.ts";

/** Rows of the built-in table, in chunks of {@link CHUNK_ROWS}. */
const ROWS = 400;
const CHUNK_ROWS = 100;

/**
 * Prepares the built-in table as a job of `CHUNK_ROWS`-row chunks, encodes its
 * chunks, frames and reads them back as workers send them, and writes the archive.
 * About 40-80 ms of CPU on the 2-core machine of `bench/cluster_bench.ts`.
 *
 * @param dataDir The master's data directory (the files go in a folder of their own).
 * @returns When done; the folder is removed whatever happened.
 */
export async function warmUpMaster(dataDir: string): Promise<void> {
  const dir = join(dataDir, "warm-up");
  try {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.mkdir(dir, { recursive: true });
    const path = join(dir, "table.csv");
    await Deno.writeTextFile(path, `${WARM_UP_HEADER}\n${warmUpRows(ROWS)}`);
    const identity = await openedIdentity(path);
    const prepared = await prepareJob({
      path,
      format: "csv",
      chunkRows: CHUNK_ROWS,
      codec: "zstd",
      types: {},
      identity,
    });
    const schema = prepared.schema as Schema;
    const plans = prepared.plans as Record<string, ColumnPlan>;
    const header = newArchiveHeader(schema, prepared.codec, null, plans, {
      chunkRows: CHUNK_ROWS,
    });
    const writer = await ArchiveWriter.create(join(dir, "table.pf"), header);
    try {
      for (const window of prepared.windows) {
        const rows = await readTaskRows({
          path,
          format: "csv",
          schema,
          types: prepared.types,
          window,
          identity,
          delimiter: prepared.delimiter,
        });
        const chunk = await encodeChunk(rows, { plans, codec: prepared.codec });
        const body = encodeChunkBody({ task_id: "warm-up", lease: "-", worker_id: "-" }, chunk);
        await writer.writeChunk(decodeChunkBody(body).chunk);
      }
      await writer.finish();
    } catch (err) {
      await writer.abort();
      throw err;
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
