import assert from "node:assert/strict";
import { REFERENCE_FILE, referenceMarkdown } from "./reference.ts";
import { allCommands } from "./run.ts";

Deno.test("cli/REFERENCE.md is what the commands declare (run 'deno task docs' after changing a command)", async () => {
  assert.equal(await Deno.readTextFile(REFERENCE_FILE), await referenceMarkdown());
});

Deno.test("the README names every PERMAFROST_* setting and links the reference", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  assert.ok(readme.includes("(cli/REFERENCE.md)"), "the README links cli/REFERENCE.md");
  for (const { commands } of await allCommands()) {
    for (const c of commands) {
      for (const s of Object.values(c.settings ?? {})) {
        assert.ok(readme.includes(`\`${s.env}\``), `${c.name}: ${s.env} is not in the README`);
      }
    }
  }
});
