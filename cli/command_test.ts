/**
 * Tests of `command.ts`'s own parse of plain command lines: whatever it parses, it
 * parses as `node:util`'s `parseArgs` (which it stands in for) does, for every flag of
 * every command; what it leaves to `parseArgs` is what only that parses or refuses.
 *
 * @module
 */
import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import { allFlags, type Command, type Flag, plainParse } from "./command.ts";
import { ARCHIVE_COMMANDS } from "./archive.ts";
import { CLUSTER_COMMANDS } from "./cluster.ts";
import { SERVER_COMMANDS } from "./servers.ts";
import { USER_COMMANDS } from "./users.ts";

const COMMANDS: readonly Command[] = [
  ...ARCHIVE_COMMANDS,
  ...CLUSTER_COMMANDS,
  ...SERVER_COMMANDS,
  ...USER_COMMANDS,
];

function nodeParse(args: string[], flags: readonly Flag[]) {
  try {
    return parseArgs({
      args,
      options: Object.fromEntries(
        flags.map((f) => [f.name, {
          type: f.type,
          ...(f.short ? { short: f.short } : {}),
          ...(f.multiple ? { multiple: true } : {}),
        }]),
      ),
      strict: true,
      allowPositionals: true,
      allowNegative: true,
    });
  } catch (err) {
    return err as Error;
  }
}

/** Command lines made of each flag in every form, with positionals around them. */
function lines(flags: readonly Flag[]): string[][] {
  const out: string[][] = [[], ["a.pf"], ["a.pf", "-", "b"], ["a.pf", "--", "--help", "-x"]];
  for (const f of flags) {
    const long = `--${f.name}`;
    if (f.type === "boolean") {
      out.push([long], ["a.pf", long, "b.pf"], [long, long], [`${long}=1`], [`--no-${f.name}`]);
    } else {
      out.push(
        [long, "v1"],
        [`${long}=v1`],
        [`${long}=`],
        [`${long}=a=b`],
        ["a.pf", long, "v1", "b.pf", `${long}=v2`],
        [long],
        [long, "-x"],
        [long, "-"],
        [long, "--"],
      );
    }
    if (f.short) out.push([`-${f.short}`], ["a.pf", `-${f.short}`]);
  }
  out.push(["--no-such-flag"], ["-z"], ["a.pf", "--hel"], ["-"], [""]);
  return out;
}

Deno.test("plainParse parses what it takes as parseArgs does, for every command's flags", () => {
  let plain = 0;
  let left = 0;
  for (const command of COMMANDS) {
    const flags = allFlags(command);
    for (const args of lines(flags)) {
      const mine = plainParse(args, flags);
      if (mine === null) {
        left++;
        continue;
      }
      plain++;
      const theirs = nodeParse(args, flags);
      const label = `${command.name} ${JSON.stringify(args)}`;
      assert.ok(!(theirs instanceof Error), `${label}: parseArgs refuses it (${theirs})`);
      assert.deepStrictEqual(mine.values, theirs.values, label);
      assert.deepStrictEqual(mine.positionals, theirs.positionals, label);
    }
  }
  // Both ways were taken: plain lines here, the rest by parseArgs.
  assert.ok(plain > 200 && left > 200, `${plain} parsed here, ${left} left to parseArgs`);
});

Deno.test("plainParse leaves short flags, --no- flags, unknown flags and doubtful values to parseArgs", () => {
  const flags: Flag[] = [
    { name: "rows", type: "string", help: "" },
    { name: "force", type: "boolean", help: "", short: "f" },
  ];
  for (
    const args of [
      ["-f"],
      ["--no-force"],
      ["--nope"],
      ["--force=yes"],
      ["--rows"],
      ["--rows", "-1:2"],
      ["--rows", "-"],
    ]
  ) {
    assert.equal(plainParse(args, flags), null, JSON.stringify(args));
  }
  assert.deepEqual(plainParse(["x", "--rows", "1:2", "--force"], flags), {
    values: Object.assign(Object.create(null), { rows: "1:2", force: true }),
    positionals: ["x"],
  });
});
