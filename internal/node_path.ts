/**
 * `node:path`, loaded on first use: for the modules a quick command (`audit`, `peek`,
 * `verify`, a slice) loads but whose path work happens only on paths it does not take
 * (object storage, an error message). A static import of any Node module makes the
 * process bootstrap Node compatibility before its first line runs, ~6 ms of CPU, about
 * a tenth of such a command; `cli/start_graph_test.ts` checks that they load none.
 *
 * @module
 */

type NodePath = typeof import("node:path");

let loaded: NodePath | null = null;

/**
 * Deno's `node:path` (the same module object a static import gives).
 *
 * @returns The module.
 * @throws {Error} where the runtime cannot load a Node module synchronously.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nodePath } from "./node_path.ts";
 * assert.equal(nodePath().basename("/a/b.pf"), "b.pf");
 * ```
 */
export function nodePath(): NodePath {
  if (loaded !== null) return loaded;
  const process = (globalThis as {
    process?: { getBuiltinModule?: (id: string) => unknown };
  }).process;
  const path = process?.getBuiltinModule?.("node:path") as NodePath | undefined;
  if (!path) throw new Error("node:path cannot be loaded synchronously in this runtime");
  return loaded = path;
}
