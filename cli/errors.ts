/**
 * How the CLI ends: exit 0 on success, 1 on a failure, 2 on a usage error; and the
 * one error line people read — "what went wrong — what to do [CODE]" — never a class
 * name or a stack trace for an expected failure.
 *
 * @module
 */
import { ConfigError } from "../internal/config.ts";
import { PermafrostError } from "../internal/errors.ts";

/** A command line that cannot run as typed: exit 2. */
export class UsageError extends Error {
  /** Always `"UsageError"`. */
  override name = "UsageError";
}

/** Error codes that are the caller's command line being wrong (exit 2), whatever the layer. */
const USAGE_CODES: ReadonlySet<string> = new Set(["BAD_OPTION", "BAD_CONFIG", "UNKNOWN_FLAG"]);

/**
 * The exit code of a failure, and the line(s) to print for it.
 *
 * @param err What a command threw.
 * @param command The command (`freeze`, `cluster submit`) for the help hint; empty
 * when the words named no command (the message says where to look).
 * @returns The exit code and the text.
 */
export function describeFailure(err: unknown, command: string): { code: number; text: string } {
  const hint = command === "" ? "" : `\n(see 'permafrost ${command} --help')`;
  if (err instanceof UsageError) return { code: 2, text: `error: ${err.message}${hint}` };
  if (err instanceof ConfigError || (err instanceof PermafrostError && USAGE_CODES.has(err.code))) {
    return { code: 2, text: `error: ${err.message} [${(err as PermafrostError).code}]${hint}` };
  }
  if (err instanceof PermafrostError) {
    return { code: 1, text: `error: ${err.message} [${err.code}]` };
  }
  return {
    code: 1,
    text: `error: ${err instanceof Error ? err.stack ?? err.message : String(err)}`,
  };
}
