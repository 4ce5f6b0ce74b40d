/**
 * The README's translations stay in step with it: every translation (`README.*.md`)
 * holds exactly the English README's shell blocks, in the same order, so a command a
 * reader copies works whichever language they read; and each links to the other. The
 * `permafrost` command is installed one way, `deno task install`.
 */
import assert from "node:assert/strict";

/** The ```sh blocks of a Markdown text, each without the indentation of its fence. */
function shellBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```sh\s*$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i]!.trim() !== "```"; i++) {
      body.push(lines[i]!.slice(Math.min(indent, lines[i]!.search(/\S|$/))));
    }
    blocks.push(body.join("\n"));
  }
  return blocks;
}

const english = Deno.readTextFileSync("README.md");
const translations = [...Deno.readDirSync(".")]
  .map((e) => e.name)
  .filter((name) => /^README\.[a-z]{2}(-[A-Z]{2})?\.md$/.test(name))
  .sort();

Deno.test("there is at least one translation of the README, and the English README links each", () => {
  assert.ok(translations.length > 0);
  for (const name of translations) assert.ok(english.includes(`](${name})`), name);
});

for (const name of translations) {
  Deno.test(`${name} has the English README's shell blocks, in order, and links back`, () => {
    const text = Deno.readTextFileSync(name);
    const expected = shellBlocks(english);
    assert.ok(expected.length >= 10, "the English README's blocks were found");
    assert.deepEqual(shellBlocks(text), expected);
    assert.ok(text.includes("](README.md)"), "links to the English README");
  });
}

Deno.test("the README installs permafrost with deno task install, which exists", () => {
  // `cli/bundle_test.ts` checks what it installs: deno task cli's flags, main.ts's bytes.
  const lines = shellBlocks(english).join("\n").split("\n");
  assert.ok(lines.some((line) => /^deno task install(\s|$)/.test(line)), "an install line");
  assert.ok(!lines.some((line) => line.startsWith("deno install ")), "one way to install");
  const tasks = (JSON.parse(Deno.readTextFileSync("deno.json")) as { tasks: object }).tasks;
  assert.ok("install" in tasks);
});

Deno.test("shellBlocks() finds indented blocks and tells a changed command", () => {
  const a = "x\n```sh\nls -l\n```\n- item\n\n  ```sh\n  echo hi\n  ```\n";
  assert.deepEqual(shellBlocks(a), ["ls -l", "echo hi"]);
  assert.notDeepEqual(shellBlocks(a.replace("echo hi", "echo ho")), shellBlocks(a));
});
