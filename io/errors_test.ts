/** `reviveIoError`: an IoError that crossed from a Worker comes back whole. */
import assert from "node:assert/strict";
import { IoError, reviveIoError } from "./errors.ts";

Deno.test("reviveIoError() restores an IoError's code, column and path", () => {
  const e = reviveIoError({
    name: "IoError",
    code: "SCHEMA_MISMATCH",
    message: "Cannot read",
    details: { column: "u", path: "/x.parquet" },
  });
  assert.ok(e instanceof IoError);
  assert.equal(e.code, "SCHEMA_MISMATCH");
  assert.equal(e.column, "u");
  assert.equal(e.path, "/x.parquet");
  assert.equal(
    reviveIoError({ name: "FormatError", code: "X", message: "m", details: {} }),
    undefined,
  );
});
