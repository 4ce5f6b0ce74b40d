/**
 * The release version, from one place: `deno.json`'s `version`. `--version` and every
 * server's `GET /health` report it.
 *
 * @module
 */
import config from "../deno.json" with { type: "json" };

/** The release version, e.g. `1.3.1` (SemVer). */
export const VERSION: string = config.version;
