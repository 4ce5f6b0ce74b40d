import assert from "node:assert/strict";
import { version } from "./version.ts";

Deno.test("version() is deno.json's version, a SemVer release", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
  assert.equal(version(), config.version);
  assert.match(version(), /^\d+\.\d+\.\d+$/);
});
