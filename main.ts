/**
 * The `permafrost` command: routes the arguments to `cli/` and exits with its code
 * (0 success, 1 failure, 2 usage error). Nothing else lives here.
 *
 * @module
 */
import { enterCallerDirectory, run } from "./cli/mod.ts";

if (import.meta.main) {
  enterCallerDirectory();
  Deno.exit(await run(Deno.args));
}
