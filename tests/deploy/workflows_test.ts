/**
 * The GitHub workflows, checked statically against the workflow JSON schema (SchemaStore's,
 * through `@action-validator/core`, the action-validator tool built to WebAssembly): `ci.yml`
 * runs `.ci/run`; `release.yml` runs on `v*` tags, builds every Dockerfile target for
 * linux/amd64 and linux/arm64 tagged with the version and `latest`, compiles the CLI
 * for five platforms and attaches them to the release. And `deno task compile` either
 * builds a binary that runs, or (where the Deno runtime cannot be downloaded) fails
 * with one line saying so.
 */
import assert from "node:assert/strict";
import { validateWorkflow } from "@action-validator/core";
import { parse } from "yaml";
import { sh } from "./_docker.ts";

/** What the workflow schema finds wrong in a workflow file. */
function workflowErrors(content: string): string[] {
  return validateWorkflow(content).errors.map((e) =>
    `${"path" in e ? e.path : ""} ${e.title}: ${e.detail ?? ""}`.trim()
  );
}

const read = (path: string) => Deno.readTextFile(path);

Deno.test("the workflows pass GitHub's workflow schema, and a broken one does not", async () => {
  for (const file of [".github/workflows/ci.yml", ".github/workflows/release.yml"]) {
    assert.deepEqual(workflowErrors(await read(file)), [], file);
  }
  const broken = (await read(".github/workflows/ci.yml")).replace("runs-on:", "run-on:");
  assert.ok(workflowErrors(broken).length > 0, "the schema does refuse");
});

Deno.test("ci.yml runs .ci/run; release.yml builds every image target for two platforms and five binaries", async () => {
  const ci = parse(await read(".github/workflows/ci.yml"));
  const steps = ci.jobs.ci.steps.map((s: { run?: string }) => s.run ?? "").join("\n");
  assert.match(steps, /bash \.ci\/run/);

  const release = parse(await read(".github/workflows/release.yml"));
  assert.deepEqual(release.on.push.tags, ["v*"]);
  const targets = [...(await read("Dockerfile")).matchAll(/^FROM \S+ AS (\S+)$/gm)]
    .map((m) => m[1]!)
    .filter((t) => !["deno", "build", "runtime"].includes(t));
  assert.deepEqual(targets, ["master", "worker", "catalog", "operator"]);
  const images = release.jobs.images;
  assert.deepEqual(images.strategy.matrix.target, targets);
  const build = images.steps.find((s: { uses?: string }) =>
    s.uses?.startsWith("docker/build-push-action")
  );
  assert.equal(build.with.platforms, "linux/amd64,linux/arm64");
  assert.equal(build.with.push, true);
  const tags = build.with.tags.trim().split("\n");
  assert.ok(tags.some((t: string) => t.endsWith(":${{ steps.version.outputs.version }}")));
  assert.ok(tags.some((t: string) => t.endsWith(":latest")));
  assert.deepEqual(release.jobs.binaries.strategy.matrix.target, [
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
  ]);
  const compile = release.jobs.binaries.steps.map((s: { run?: string }) => s.run ?? "").join("\n");
  assert.match(compile, /deno@2\.9\.6 task compile --target/);
  assert.deepEqual(release.jobs.release.needs, ["images", "binaries"]);
});

Deno.test("deno task compile builds a binary that runs, or says in one line why it cannot", async () => {
  const out = await Deno.makeTempDir({ prefix: "permafrost-compile-" });
  try {
    const r = await sh([Deno.execPath(), "task", "-q", "compile", "--output", `${out}/permafrost`]);
    if (r.code === 0) {
      const version = await sh([`${out}/permafrost`, "--version"]);
      assert.equal(version.code, 0, version.stderr);
      assert.match(version.stdout, /permafrost \d+\.\d+\.\d+/);
    } else {
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0]!,
        /^deno task compile: cannot download the Deno runtime \(https:\/\/dl\.deno\.land\//,
      );
    }
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
