/**
 * The one HTTP call the KMS providers make: POST a JSON body, read a bounded JSON
 * answer, with a time limit. Transport failures, time-outs and answers that are not
 * JSON become `KeyError` `KEY_PROVIDER_FAILED`; the caller maps API error bodies.
 *
 * The `fetch` is injected (default: the global one), so a provider can go through a
 * proxy client or straight to a test's Hono app.
 *
 * Private to `keys/`.
 *
 * @module
 */
import { KeyError } from "./errors.ts";

/** How a provider talks HTTP. */
export interface HttpClientOptions {
  /** The fetch to use (default: `globalThis.fetch`). */
  fetch?: typeof fetch;
  /** Time limit of one call in milliseconds (default 30,000). */
  timeoutMs?: number;
}

/** Largest answer read from a KMS (its answers are well under 10 kB). */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** A KMS answer. */
export interface JsonAnswer {
  /** HTTP status. */
  status: number;
  /** Parsed body (null when the body was empty). */
  body: unknown;
}

/**
 * POSTs and reads a JSON answer.
 *
 * @param url Where.
 * @param init Headers and body.
 * @param options fetch and time limit.
 * @param what Service name for messages (e.g. `AWS KMS Encrypt`).
 * @returns Status and parsed body.
 * @throws {KeyError} KEY_PROVIDER_FAILED on transport failure, time-out or a non-JSON answer.
 */
export async function postJson(
  url: string,
  init: { headers: Record<string, string>; body: Uint8Array },
  options: HttpClientOptions,
  what: string,
): Promise<JsonAnswer> {
  const doFetch = options.fetch ?? fetch;
  let res: Response;
  try {
    res = await doFetch(url, {
      method: "POST",
      headers: init.headers,
      body: init.body.slice(),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
  } catch (cause) {
    throw new KeyError(
      "KEY_PROVIDER_FAILED",
      `Cannot reach ${what} at ${url}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
  let text: string;
  try {
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.length > MAX_ANSWER_BYTES) throw new Error(`answer is ${bytes.length} bytes`);
    text = new TextDecoder().decode(bytes);
  } catch (cause) {
    throw new KeyError(
      "KEY_PROVIDER_FAILED",
      `Cannot read the answer of ${what} (HTTP ${res.status}): ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { cause },
    );
  }
  if (text.trim() === "") return { status: res.status, body: null };
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch (cause) {
    throw new KeyError(
      "KEY_PROVIDER_FAILED",
      `${what} answered HTTP ${res.status} with a body that is not JSON`,
      { cause },
    );
  }
}
