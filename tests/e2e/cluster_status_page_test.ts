/**
 * The master's status page at `/`, rendered by headless Chromium (Debian
 * `chromium`): after its script has run, the DOM lists the worker with its status
 * and heartbeat age, and the job with its progress bar, rows/s, MB/s, elapsed time,
 * ratio and throughput sparkline; a screenshot is saved as
 * `.tmp/screenshots/master-status.png`. Skipped, with a message, when no Chromium
 * binary is installed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ClusterClient } from "../../client/cluster_client.ts";
import { type ServerProcess, spawnLocalMaster, spawnLocalWorker } from "../../cli/spawn.ts";
import { renderPage, requireTool } from "../../internal/_test_utils.ts";

const chromium = requireTool("chromium", "tests/e2e/cluster_status_page_test.ts");

Deno.test({
  name: "cluster e2e: the status page shows workers and jobs with progress in headless Chromium",
  ignore: chromium === null,
  async fn() {
    await Deno.mkdir(".tmp", { recursive: true });
    const dir = await Deno.makeTempDir({ dir: ".tmp", prefix: "e2e-page-" });
    const children: ServerProcess[] = [];
    try {
      const source = join(dir, "a.csv");
      await Deno.writeTextFile(
        source,
        "id,v\n" + Array.from({ length: 3000 }, (_, i) => `${i},${i % 17}`).join("\n") + "\n",
      );
      const master = await spawnLocalMaster({
        dataDir: join(dir, "master"),
        args: ["--heartbeat-s", "0.2"],
      });
      children.push(master);
      children.push(
        await spawnLocalWorker({ master: master.url, id: "page-worker" }),
      );
      const client = new ClusterClient(master.url);
      const jobId = await client.freeze(source, join(dir, "a.pf"), { chunkRows: 500 });
      const job = await client.wait(jobId, { pollInterval: 50 });
      assert.equal(job.status, "DONE");

      const dom = await renderPage(chromium!, `${master.url}/`, {
        screenshot: ".tmp/screenshots/master-status.png",
      });
      // The script ran: the placeholder rows are gone and the data is in.
      assert.match(dom, /<div id="updated">updated /);
      assert.match(
        dom,
        /<tr data-worker="page-worker"><td>page-worker<\/td><td class="status idle">idle<\/td>/,
      );
      assert.match(dom, /s ago<\/td>/);
      assert.match(
        dom,
        new RegExp(`<tr data-job="${jobId}"><td>${jobId}</td><td class="status DONE">DONE</td>`),
      );
      assert.match(
        dom,
        /<div class="bar" title="100%"><div style="width: 100(\.0)?%;"><\/div><\/div> 100%/,
      );
      assert.match(dom, /6 \/ 6/);
      // The job's figures: rows/s, MB/s, elapsed, ratio, and the throughput sparkline.
      assert.match(dom, /<td class="num rate">[\d,]+<\/td><td class="num mbs">[\d.]+<\/td>/);
      assert.match(dom, /<td class="num elapsed">[\d.]+ s<\/td><td class="num eta"><\/td>/);
      assert.match(dom, /<td class="num ratio">\d+\.\d×<\/td>/);
      assert.match(
        dom,
        /<td class="spark"><svg class="spark"[^>]*><title>rows\/s, peak [\d,]+<\/title><polygon[^>]*><\/polygon><polyline points="[\d., ]+"><\/polyline><\/svg><\/td>/,
      );
      assert.ok((await Deno.stat(".tmp/screenshots/master-status.png")).size > 1000);
    } finally {
      await Promise.allSettled(children.map((c) => c.stop("SIGKILL")));
      await Deno.remove(dir, { recursive: true });
    }
  },
});
