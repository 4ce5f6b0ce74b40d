/**
 * Whether a text names an object in a store rather than a local path: a leaf with no
 * imports, so that a command on a local file (a thaw, a slice) can tell without
 * loading `uri.ts`'s parsers and the `StorageError` they bring. `uri.ts` re-exports it.
 *
 * @module
 */

/**
 * Whether a text names an object in a store (not a local path).
 *
 * @param text A path or URI.
 * @returns True for `scheme://…` with a scheme other than `file`.
 */
export function isRemote(text: string): boolean {
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  return m !== null && m[1]!.toLowerCase() !== "file";
}
