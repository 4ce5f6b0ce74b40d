/**
 * The catalog's REST suite (`_rest_suite.ts`) on the Deno KV store, whose queries run
 * on a duckdb-wasm mirror (`kv_store.ts`): the same requests, the same answers.
 *
 * @module
 */
import { join } from "node:path";
import { Catalog } from "./catalog.ts";
import { KvStore } from "./kv_store.ts";
import { restSuite } from "./_rest_suite.ts";

restSuite({
  label: "kv",
  engine: "duckdb-wasm",
  open: async (dir, options) =>
    await Catalog.open(new KvStore(await Deno.openKv(join(dir, "c.kv"))), options),
});
