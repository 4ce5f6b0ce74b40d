/**
 * The master's warm-up (`_warm_up.ts`): it runs the built-in table through a job's
 * preparation and assembly, leaves nothing behind, and a master that cannot warm up
 * still starts and stops.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { warmUpMaster } from "./_warm_up.ts";
import { startMaster } from "./server.ts";
import { MASTER_CONFIG } from "./config.ts";
import { loadConfig } from "../internal/config.ts";
import { createLogger } from "../internal/log.ts";

Deno.test("warmUpMaster runs in the data directory and leaves nothing there", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // What a master stopped mid-way would have left.
    await Deno.mkdir(join(dir, "warm-up"));
    await Deno.writeTextFile(join(dir, "warm-up", "table.csv"), "stale");
    await Deno.writeTextFile(join(dir, "keep.txt"), "other");
    await warmUpMaster(dir);
    const left = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.deepEqual(left, ["keep.txt"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a master whose warm-up fails logs it, serves and closes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A data directory that is a file: the warm-up's folder cannot be made in it.
    const dataDir = join(dir, "data");
    await Deno.writeTextFile(dataDir, "not a directory");
    const lines: string[] = [];
    const logger = createLogger({
      component: "master",
      level: "debug",
      sink: (l) => lines.push(l),
    });
    const config = { ...loadConfig(MASTER_CONFIG, { env: {} }), dataDir, db: ":memory:" };
    const services = await startMaster(config, { logger });
    assert.equal(services.master.health().status, "ok");
    await services.close();
    assert.ok(lines.some((l) => l.includes("warm-up failed")), lines.join("\n"));
    assert.equal(lines.some((l) => l.includes("warmed up")), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a master warms up once, in the background, and closes after it", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    const lines: string[] = [];
    const logger = createLogger({
      component: "master",
      level: "debug",
      sink: (l) => lines.push(l),
    });
    const config = { ...loadConfig(MASTER_CONFIG, { env: {} }), dataDir, db: ":memory:" };
    const services = await startMaster(config, { logger });
    await services.close();
    assert.equal(lines.filter((l) => l.includes("warmed up")).length, 1, lines.join("\n"));
    assert.deepEqual([...Deno.readDirSync(dataDir)].map((e) => e.name), []);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
