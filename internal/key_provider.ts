/**
 * The one interface of envelope-key providers: what `format/` (which seals blocks with
 * a data key) asks of whatever wraps that key — the `local` key wrap in `format/`, the
 * KMS clients in `keys/`. It lives here, below both, so neither imports the other.
 * Types only.
 *
 * @module
 */

/** Wraps and unwraps data keys with a key the provider holds (envelope encryption). */
export interface KeyProvider {
  /** Name recorded as the header's `key_provider` (`local`, `aws-kms`, `gcp-kms`). */
  readonly name: string;
  /** The key this provider wraps with, as the user named it. */
  readonly keyId: string;
  /**
   * Wraps a data key.
   *
   * @param dataKey The 32-byte data key.
   * @returns The wrapped key (EDEK) and the key id to record (a KMS may answer with its canonical id).
   * @throws A `PermafrostError` coded KEY_PROVIDER_FAILED when the provider cannot be reached or refuses.
   */
  wrap(dataKey: Uint8Array): Promise<{ edek: Uint8Array; keyId: string }>;
  /**
   * Unwraps an EDEK.
   *
   * @param edek The wrapped key from the header.
   * @param keyId The header's `key_id`.
   * @returns The 32-byte data key.
   * @throws A `PermafrostError` coded WRONG_KEY when this key did not wrap it, KEY_PROVIDER_FAILED otherwise.
   */
  unwrap(edek: Uint8Array, keyId: string | null): Promise<Uint8Array>;
}
