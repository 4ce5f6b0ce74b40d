/**
 * A real process for the append crash test: appends `<source>` to `<archive>`
 * on the calling thread and prints `chunk N` after each new chunk reaches the
 * temp file, so the test can SIGKILL it in the middle of the write.
 *
 * @module
 */
import { append } from "../../ops/append.ts";

const [source, archive] = Deno.args;
const enc = new TextEncoder();
Deno.stdout.writeSync(enc.encode("start\n"));
await append(source!, archive!, {
  threads: 0,
  onProgress: (p) => void Deno.stdout.writeSync(enc.encode(`chunk ${p.chunks_added}\n`)),
});
Deno.stdout.writeSync(enc.encode("done\n"));
