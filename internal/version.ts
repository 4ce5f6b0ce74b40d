/**
 * The release version, from one place: `deno.json`'s `version`. `--version` and every
 * server's `GET /health` report it. Read once, when first asked (not at start-up),
 * from the `deno.json` beside the code (a `deno compile` build includes it).
 *
 * @module
 */

let cached: string | undefined;

/**
 * The release version, e.g. `1.3.1` (SemVer), or `unknown` when `deno.json` cannot be
 * read.
 *
 * @returns The version.
 */
export function version(): string {
  if (cached === undefined) {
    try {
      const text = Deno.readTextFileSync(new URL("../deno.json", import.meta.url));
      const v = (JSON.parse(text) as { version?: unknown }).version;
      cached = typeof v === "string" ? v : "unknown";
    } catch {
      cached = "unknown";
    }
  }
  return cached;
}
