import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleable, installFlags } from "./bundle.ts";
import { cliTaskFlags, shellWords } from "./compile.ts";
import { freeze } from "../mod.ts";

const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));

Deno.test("bundleable makes our computed imports literal and points the rest at the copy", () => {
  const text = [
    'const POOL = new URL("./_pool.ts", import.meta.url);',
    "const load = () => import(POOL.href);",
    "const other = () => import(",
    '  new URL("./other.ts", import.meta.url).href',
    ");",
    'const worker = new URL("./_worker.ts", import.meta.url);',
    'type T = typeof import("./other.ts");',
  ].join("\n");
  const out = bundleable(text, join("ops", "x.ts"), "/co");
  assert.match(out, /const load = \(\) => import\("\.\/_pool\.ts"\);/);
  assert.match(out, /const other = \(\) => import\("\.\/other\.ts"\);/);
  assert.match(out, /new URL\("\.\/_worker\.ts", "file:\/\/\/co\/ops\/x\.ts"\)/);
  assert.ok(!out.includes("import.meta.url"));
});

Deno.test("bundleable refuses a computed import it cannot make literal", () => {
  const text = "const url = pick();\nawait import(url.href);\n";
  assert.throws(() => bundleable(text, "x.ts", "/co"), /x\.ts: computed import\(url\.href\)/);
});

Deno.test("the installed (bundled) CLI writes the bytes main.ts writes", async () => {
  const work = await Deno.makeTempDir({ prefix: "permafrost-bundle-test-" });
  try {
    const csv = join(work, "t.csv");
    const rows = Array.from(
      { length: 3000 },
      (_, i) =>
        `${i},${(i * 7) % 13 - 6},k${i % 17},2024-01-${String(1 + i % 28).padStart(2, "0")}`,
    );
    await Deno.writeTextFile(csv, `id,delta,key,day\n${rows.join("\n")}\n`);
    const archive = join(work, "t.pf");
    await freeze(csv, archive, { chunkRows: 1000 });
    // What `deno task install` does, into this test's folders.
    const root = join(work, "root");
    const installed = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-q", "-A", join(CHECKOUT, "cli", "bundle.ts")]
        .concat(["--root", root, "--dist", join(work, "dist"), "--name", "pf"]),
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(installed.success, new TextDecoder().decode(installed.stderr));
    const denoJson = await Deno.readTextFile(join(CHECKOUT, "deno.json"));
    // The command runs with deno task cli's permissions and V8 flags (INIT_CWD aside).
    const shim = await Deno.readTextFile(join(root, "bin", "pf"));
    const shimFlags = shellWords(shim.split("\n").find((l) => l.startsWith("exec deno run "))!)
      .filter((word) => word.startsWith("--") && !["--quiet", "--config"].includes(word));
    assert.deepEqual(shimFlags.sort(), installFlags(denoJson).sort());
    assert.ok(!installFlags(denoJson).some((flag) => flag.includes("INIT_CWD")));
    const output = async (cmd: string, args: string[]) => {
      const out = await new Deno.Command(cmd, {
        args,
        // The installed command runs `deno` from PATH.
        env: { PATH: `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? ""}` },
        cwd: work,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
      return new TextDecoder().decode(out.stdout);
    };
    const bundled = (args: string[]) => output(join(root, "bin", "pf"), args);
    const source = (args: string[]) =>
      output(
        Deno.execPath(),
        ["run", "-q", ...cliTaskFlags(denoJson), join(CHECKOUT, "main.ts")].concat(args),
      );
    const commands = [
      ["--version"],
      ["--help"],
      ["audit", archive],
      ["peek", archive],
      ["thaw", archive, "-", "--rows", "1500:1510"],
      ["thaw", archive, "-", "--format", "jsonl", "--where", "delta > 3"],
    ];
    for (const args of commands) {
      assert.equal(await bundled(args), await source(args), args.join(" "));
    }
    // A whole thaw, on the thaw Workers (their scripts from the build's copy), and to Parquet.
    for (const name of ["a.csv", "a.parquet"]) {
      await source(["thaw", archive, join(work, `source-${name}`)]);
      await bundled(["thaw", archive, join(work, `bundled-${name}`)]);
      assert.deepEqual(
        await Deno.readFile(join(work, `bundled-${name}`)),
        await Deno.readFile(join(work, `source-${name}`)),
        name,
      );
    }
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
