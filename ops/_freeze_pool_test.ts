/**
 * `_freeze_pool.ts`: which sources a freeze reads in its Workers, and a pool started
 * ahead of its freeze is the one the freeze takes, or is stopped when none does.
 */
import assert from "node:assert/strict";
import { freezePool, readInWorkers, startFreezePool, stopStartedPool } from "./_freeze_pool.ts";

Deno.test("readInWorkers: a local CSV or Parquet file with Workers and no primary key", () => {
  assert.equal(readInWorkers("a.csv", { threads: 2 }), "csv");
  assert.equal(readInWorkers("a.parquet", { threads: 1 }), "parquet");
  assert.equal(readInWorkers("a.txt", { threads: 2, format: "csv" }), "csv");
  assert.equal(readInWorkers("a.jsonl", { threads: 2 }), null);
  assert.equal(readInWorkers("a.unknown", { threads: 2 }), null);
  assert.equal(readInWorkers("a.csv", { threads: 0 }), null);
  assert.equal(readInWorkers("a.csv", { threads: Number.NaN }), null);
  assert.equal(readInWorkers("a.csv", { threads: 2, primaryKey: "id" }), null);
  assert.equal(readInWorkers({ schema: [], batches: [] }, { threads: 2 }), null);
});

Deno.test("a pool started ahead is stopped when no freeze takes it", async () => {
  assert.equal(startFreezePool("a.csv", { threads: 1 }), true);
  assert.equal(startFreezePool("b.csv", { threads: 1 }), false, "one at a time");
  assert.equal(await stopStartedPool(), true);
  assert.equal(await stopStartedPool(), false);
  assert.equal(startFreezePool("a.jsonl", { threads: 1 }), false, "read on the freeze's thread");
  assert.equal(startFreezePool("a.csv", { threads: 10_000 }), false, "the freeze refuses it");
  assert.equal(await stopStartedPool(), false);
});

Deno.test("freezePool takes the pool started ahead, with its thread count", async () => {
  assert.equal(startFreezePool("a.csv", { threads: 1 }), true);
  const pool = freezePool(1);
  try {
    assert.equal(pool.threads, 1);
    assert.equal(await stopStartedPool(), false, "taken");
  } finally {
    await pool.shutdown();
  }
});

Deno.test("freezePool with another thread count stops the started pool and starts its own", async () => {
  assert.equal(startFreezePool("a.csv", { threads: 1 }), true);
  const pool = freezePool(2);
  try {
    assert.equal(pool.threads, 2);
    assert.equal(await stopStartedPool(), false);
  } finally {
    await pool.shutdown();
  }
});
