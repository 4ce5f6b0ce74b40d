/**
 * Moving typed arrays between threads: `postMessage` with a transfer list moves whole
 * `ArrayBuffer`s. A view that is the whole of its buffer moves as it is; one that is a
 * view into a larger buffer (a span read for several blocks, a pooled Node buffer, a
 * slice of a chunk) is copied first, so that nothing else is detached and the larger
 * buffer is not cloned with it.
 *
 * @module
 */

/**
 * The view to post, its buffer added to the transfer list: `view` itself when it owns
 * its whole buffer (and that buffer is not moving already), else a copy.
 *
 * @param view A typed array the sender gives up.
 * @param moving The transfer list being built.
 * @returns What to post in its place.
 */
export function movable<T extends ArrayBufferView>(view: T, moving: Set<ArrayBuffer>): T {
  const whole = view.byteOffset === 0 && view.buffer instanceof ArrayBuffer &&
    view.byteLength === view.buffer.byteLength && !moving.has(view.buffer);
  const moved = whole ? view : (view as unknown as { slice(): T }).slice();
  moving.add(moved.buffer as ArrayBuffer);
  return moved;
}
