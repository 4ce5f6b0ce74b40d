/**
 * The router: `--version`, `help`, `help <command>`, `<command> --help` for every
 * command, "did you mean" for mistyped commands and flags, and the exit codes.
 */
import assert from "node:assert/strict";
import { version } from "../internal/version.ts";
import { ARCHIVE_COMMANDS } from "./archive.ts";
import { CLUSTER_COMMANDS } from "./cluster.ts";
import { SERVER_COMMANDS } from "./servers.ts";
import { startCommand } from "./start.ts";
import { USER_COMMANDS } from "./users.ts";
import { allFlags } from "./command.ts";
import { cli } from "./_test_utils.ts";

const EVERY_COMMAND = [
  ...ARCHIVE_COMMANDS,
  ...SERVER_COMMANDS,
  startCommand,
  ...CLUSTER_COMMANDS,
  ...USER_COMMANDS,
];

Deno.test("--version prints the release version from deno.json", async () => {
  const deno = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
  assert.equal(version(), deno.version);
  for (const flag of ["--version", "-V", "version"]) {
    const r = await cli([flag]);
    assert.equal(r.code, 0);
    assert.equal(r.out, `permafrost ${deno.version}`);
  }
});

Deno.test("help lists every command; no command prints it to stderr with exit 2", async () => {
  const help = await cli(["help"]);
  assert.equal(help.code, 0);
  for (const c of EVERY_COMMAND) assert.match(help.out, new RegExp(`^  ${c.name} `, "m"), c.name);
  assert.equal((await cli(["--help"])).out, help.out);
  const none = await cli([]);
  assert.equal(none.code, 2);
  assert.equal(none.err, help.out);
});

Deno.test("every command has --help, -h and help <command>, listing each flag and an example", async () => {
  for (const c of EVERY_COMMAND) {
    const words = c.name.split(" ");
    const r = await cli([...words, "--help"]);
    assert.equal(r.code, 0, `${c.name} --help: ${r.err}`);
    assert.match(r.out, new RegExp(`^Usage: permafrost ${c.name}`), c.name);
    for (const f of allFlags(c)) assert.ok(r.out.includes(`--${f.name}`), `${c.name}: --${f.name}`);
    assert.match(r.out, /Examples:\n {2}(\S.* )?permafrost /, c.name);
    assert.equal((await cli([...words, "-h"])).out, r.out, `${c.name} -h`);
    assert.equal((await cli(["help", ...words])).out, r.out, `help ${c.name}`);
    // --help is answered before the arguments are counted.
    assert.equal((await cli([...words, "x", "y", "z", "--help"])).out, r.out, `${c.name} x y z`);
  }
});

Deno.test("families: 'cluster' and 'catalog' list their commands", async () => {
  const cluster = await cli(["cluster", "--help"]);
  assert.equal(cluster.code, 0);
  for (const c of [...CLUSTER_COMMANDS, ...USER_COMMANDS]) {
    assert.ok(cluster.out.includes(c.name), c.name);
  }
  const bare = await cli(["cluster"]);
  assert.equal(bare.code, 2);
  assert.equal(bare.err, cluster.out);
  assert.match((await cli(["help", "catalog"])).out, /catalog serve/);
});

Deno.test("did you mean: mistyped commands, subcommands and flags exit 2 with a suggestion", async () => {
  const cases: [string[], RegExp][] = [
    [["fraeze", "a.csv", "a.pf"], /unknown command 'fraeze'; did you mean 'freeze'\?/],
    [["thwa"], /did you mean 'thaw'\?/],
    [["catalog", "serv"], /did you mean 'catalog serve'\?/],
    [
      ["freeze", "a.csv", "a.pf", "--codc", "zstd"],
      /'freeze' has no flag '--codc'; did you mean --codec\?/,
    ],
    [["thaw", "a.pf", "b.csv", "--colums", "a"], /did you mean --columns\?/],
    [["xyzzy"], /unknown command 'xyzzy' \(see 'permafrost help' for every command\)/],
  ];
  for (const [args, pattern] of cases) {
    const r = await cli(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.err, pattern, args.join(" "));
  }
});

Deno.test("start refuses bad flags with exit 2", async () => {
  for (
    const [args, pattern] of [
      [["--workers", "-1"], /--workers must be an integer 0\.\.64/],
      [["--catalog-port", "70000"], /--catalog-port must be a port/],
      [["extra"], /'start' takes no arguments, got 'extra'/],
    ] as const
  ) {
    const r = await cli(["start", ...args]);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, pattern);
  }
});
