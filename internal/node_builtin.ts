/**
 * Node's built-in modules, loaded synchronously on first use
 * (`process.getBuiltinModule`), for the modules a quick command (`audit`, `peek`,
 * `verify`, a slice, `--help`) loads but whose Node work happens only on paths it may
 * not take (object storage, an error message, an unusual command line, a large hash).
 * A static import of any Node module makes the process bootstrap Node compatibility
 * before its first line runs, ~6 ms of CPU, about a tenth of such a command;
 * `cli/start_graph_test.ts` checks that they load none. The module object is the one a
 * static import gives.
 *
 * @module
 */

type NodePath = typeof import("node:path");

/**
 * A Node built-in module, or null where the runtime cannot load one synchronously.
 *
 * @param id The module's id, e.g. `node:crypto`.
 * @returns The module, or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nodeBuiltin } from "./node_builtin.ts";
 * const os = nodeBuiltin<typeof import("node:os")>("node:os");
 * assert.equal(typeof os?.cpus, "function");
 * ```
 */
export function nodeBuiltin<T>(id: `node:${string}`): T | null {
  const process = (globalThis as {
    process?: { getBuiltinModule?: (id: string) => unknown };
  }).process;
  return (process?.getBuiltinModule?.(id) as T | undefined) ?? null;
}

/**
 * A Node built-in module that the caller cannot do without.
 *
 * @param id The module's id, e.g. `node:util`.
 * @returns The module.
 * @throws {Error} where the runtime cannot load a Node module synchronously.
 */
export function requireNodeBuiltin<T>(id: `node:${string}`): T {
  const module = nodeBuiltin<T>(id);
  if (module === null) throw new Error(`${id} cannot be loaded synchronously in this runtime`);
  return module;
}

let path: NodePath | null = null;

/**
 * Deno's `node:path`.
 *
 * @returns The module.
 * @throws {Error} where the runtime cannot load a Node module synchronously.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nodePath } from "./node_builtin.ts";
 * assert.equal(nodePath().basename("/a/b.pf"), "b.pf");
 * ```
 */
export function nodePath(): NodePath {
  return path ??= requireNodeBuiltin<NodePath>("node:path");
}
