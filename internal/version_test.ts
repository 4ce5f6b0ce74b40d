import assert from "node:assert/strict";
import { VERSION } from "./version.ts";

Deno.test("VERSION is deno.json's version, a SemVer release", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
  assert.equal(VERSION, config.version);
  assert.match(VERSION, /^\d+\.\d+\.\d+$/);
});
