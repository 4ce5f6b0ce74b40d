/** `cli/compile.ts`: the flags the binary and the benches take from `deno task cli`. */
import assert from "node:assert/strict";
import { cliTaskFlags } from "./compile.ts";

Deno.test("cliTaskFlags() gives deno task cli's flags: its permissions and V8 flags", () => {
  const flags = cliTaskFlags(Deno.readTextFileSync(new URL("../deno.json", import.meta.url)));
  assert.ok(flags.includes("--allow-run=zpaq"), flags.join(" "));
  assert.ok(flags.some((f) => f.startsWith("--v8-flags=--no-lazy,")), flags.join(" "));
  assert.ok(flags.some((f) => f.startsWith("--allow-env=PERMAFROST_*,")), flags.join(" "));
  assert.ok(!flags.includes("main.ts") && !flags.includes("-q"));
});

Deno.test("cliTaskFlags() unquotes single quotes and refuses a task of another shape", () => {
  const json = (command: string) => JSON.stringify({ tasks: { cli: { command } } });
  assert.deepEqual(cliTaskFlags(json("deno run -q '--allow-env=A,B' --allow-net main.ts")), [
    "--allow-env=A,B",
    "--allow-net",
  ]);
  assert.deepEqual(cliTaskFlags(JSON.stringify({ tasks: { cli: "deno run -q main.ts" } })), []);
  assert.throws(() => cliTaskFlags(json("deno run main.ts")), /deno run -q … main\.ts/);
  assert.throws(() => cliTaskFlags(json("deno run -q other.ts")), /deno run -q … main\.ts/);
  assert.throws(() => cliTaskFlags("{}"), /deno run -q … main\.ts/);
});
