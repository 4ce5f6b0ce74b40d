/**
 * Runs a real S3 server for the tests: the npm package `s3rver`, in a process of its
 * own (`tests/_s3rver.ts` starts and kills it). Arguments: the data directory, then
 * the buckets to create. Prints one JSON line `{"port": N}` once it listens.
 *
 * @module
 */
import S3rver from "s3rver";

const [directory, ...buckets] = Deno.args;
const server = new S3rver({
  address: "127.0.0.1",
  port: 0,
  silent: true,
  directory,
  configureBuckets: buckets.map((name) => ({ name, configs: [] })),
});
const { port } = await server.run();
Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify({ port }) + "\n"));
