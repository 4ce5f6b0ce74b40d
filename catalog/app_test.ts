/**
 * The catalog's REST suite (`_rest_suite.ts`) on the DuckDB-file store.
 *
 * @module
 */
import { join } from "node:path";
import { Catalog } from "./catalog.ts";
import { restSuite } from "./_rest_suite.ts";

restSuite({
  label: "duckdb",
  engine: "duckdb",
  open: (dir, options) => Catalog.open(join(dir, "c.db"), options),
});
