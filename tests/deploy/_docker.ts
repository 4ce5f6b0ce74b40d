/**
 * A Docker engine for the deployment tests, made real on this machine: the one
 * `DOCKER_HOST` (or the default socket) answers, or a `dockerd` started here (Debian
 * `docker.io`) with its state under `/tmp`; base images built locally when no registry
 * can be reached — Debian bookworm by `debootstrap --variant=minbase`, imported with
 * `docker import` (with this machine's CA bundle, so a build behind a TLS-inspecting
 * proxy can fetch npm packages), and the Deno binary running these tests as
 * `local/deno:bin-<version>`. Nothing here skips: a missing piece throws saying what to
 * install.
 *
 * @module
 */
import { join } from "node:path";

/** A Docker engine the tests can use. */
export interface DockerEngine {
  /** Environment for `docker` and `docker-compose` (its `DOCKER_HOST`). */
  env: Record<string, string>;
  /** The compose command: `["docker", "compose"]` or `["docker-compose"]`. */
  compose: string[];
  /** Stops the engine when these tests started it. */
  stop(): Promise<void>;
}

/** What a command printed, and whether it succeeded. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end.
 *
 * @param cmd The program and its arguments.
 * @param options Environment, standard input.
 * @returns Exit code and output.
 */
export async function sh(
  cmd: string[],
  options: { env?: Record<string, string>; stdin?: Uint8Array; cwd?: string } = {},
): Promise<Ran> {
  const child = new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    env: options.env,
    cwd: options.cwd,
    stdin: options.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin) {
    const w = child.stdin.getWriter();
    await w.write(options.stdin);
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * Runs a command that must succeed.
 *
 * @throws {Error} with its output when it fails.
 */
export async function must(cmd: string[], options: Parameters<typeof sh>[1] = {}): Promise<string> {
  const r = await sh(cmd, options);
  if (r.code !== 0) {
    throw new Error(`'${cmd.join(" ")}' failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`);
  }
  return r.stdout;
}

async function has(program: string): Promise<boolean> {
  return (await sh(["sh", "-c", `command -v ${program}`]).catch(() => null))?.code === 0;
}

async function answers(env: Record<string, string>): Promise<boolean> {
  return (await sh(["docker", "info", "--format", "{{.ServerVersion}}"], { env })).code === 0;
}

const OWN_ROOT = "/tmp/permafrost-dockerd";

/**
 * A Docker engine: the one configured, else a `dockerd` started here.
 *
 * @returns The engine.
 * @throws {Error} saying what is missing (the docker client, dockerd, compose).
 */
export async function dockerEngine(): Promise<DockerEngine> {
  if (!await has("docker")) {
    throw new Error("the docker client is missing: apt-get install -y docker.io");
  }
  const compose = (await sh(["docker", "compose", "version"])).code === 0
    ? ["docker", "compose"]
    : await has("docker-compose")
    ? ["docker-compose"]
    : null;
  if (compose === null) {
    throw new Error(
      "docker compose is missing: apt-get install -y docker-compose (or the compose v2 plugin)",
    );
  }
  const configured: Record<string, string> = {};
  const host = Deno.env.get("DOCKER_HOST");
  if (host) configured.DOCKER_HOST = host;
  if (await answers(configured)) {
    return { env: configured, compose, stop: () => Promise.resolve() };
  }
  const own = { DOCKER_HOST: `unix://${OWN_ROOT}/docker.sock` };
  if (await answers(own)) return { env: own, compose, stop: () => Promise.resolve() };
  if (!await has("dockerd")) {
    throw new Error(
      "no Docker engine answers and dockerd is missing: apt-get install -y docker.io",
    );
  }
  await Deno.mkdir(OWN_ROOT, { recursive: true });
  const log = await Deno.open(join(OWN_ROOT, "dockerd.log"), {
    write: true,
    create: true,
    truncate: true,
  });
  const daemon = new Deno.Command("dockerd", {
    args: [
      "--data-root",
      join(OWN_ROOT, "data"),
      "--exec-root",
      join(OWN_ROOT, "exec"),
      "--pidfile",
      join(OWN_ROOT, "dockerd.pid"),
      "-H",
      own.DOCKER_HOST,
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  daemon.stderr.pipeTo(log.writable).catch(() => {});
  const deadline = Date.now() + 60_000;
  while (!await answers(own)) {
    if (Date.now() > deadline) {
      daemon.kill("SIGKILL");
      const why = await Deno.readTextFile(join(OWN_ROOT, "dockerd.log")).catch(() => "");
      throw new Error(
        `dockerd did not start within 60 s:\n${why.split("\n").slice(-15).join("\n")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    env: own,
    compose,
    stop: async () => {
      daemon.kill("SIGTERM");
      await daemon.status;
    },
  };
}

/** The base images the Dockerfile is built on here. */
export interface BaseImages {
  /** `BASE_IMAGE`. */
  base: string;
  /** `DENO_IMAGE`. */
  deno: string;
}

/**
 * The Dockerfile's base images on this machine: `PERMAFROST_BASE_IMAGE` and
 * `PERMAFROST_DENO_IMAGE` when set, else images made here (kept between runs).
 *
 * @param engine The engine.
 * @returns The images' names.
 */
export async function localBaseImages(engine: DockerEngine): Promise<BaseImages> {
  const env = engine.env;
  const exists = async (image: string) =>
    (await sh(["docker", "image", "inspect", image], { env })).code === 0;
  const base = Deno.env.get("PERMAFROST_BASE_IMAGE") ?? "local/debian:bookworm";
  if (!await exists(base)) {
    if (!await has("debootstrap")) {
      throw new Error(
        `no image ${base} and no debootstrap to make one: apt-get install -y debootstrap`,
      );
    }
    const root = await Deno.makeTempDir({ prefix: "permafrost-rootfs-" });
    try {
      await must([
        "debootstrap",
        "--variant=minbase",
        "bookworm",
        root,
        "http://deb.debian.org/debian",
      ]);
      // This machine's trusted CAs (a TLS-inspecting proxy's among them), for the build.
      await Deno.copyFile(
        "/etc/ssl/certs/ca-certificates.crt",
        join(root, "etc/ssl/certs/ca-certificates.crt"),
      )
        .catch(async () => {
          await Deno.mkdir(join(root, "etc/ssl/certs"), { recursive: true });
          await Deno.copyFile(
            "/etc/ssl/certs/ca-certificates.crt",
            join(root, "etc/ssl/certs/ca-certificates.crt"),
          );
        });
      const tar = await must(["sh", "-c", `tar -C '${root}' -c . | docker import - ${base}`], {
        env,
      });
      if (!tar.trim()) throw new Error(`docker import of ${base} printed nothing`);
    } finally {
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  }
  const version = Deno.version.deno;
  const deno = Deno.env.get("PERMAFROST_DENO_IMAGE") ?? `local/deno:bin-${version}`;
  if (!await exists(deno)) {
    const dir = await Deno.makeTempDir({ prefix: "permafrost-deno-image-" });
    try {
      // The official `denoland/deno:bin-*` image holds the binary at /deno.
      await Deno.copyFile(Deno.execPath(), join(dir, "deno"));
      await must(["sh", "-c", `tar -C '${dir}' -c deno | docker import - ${deno}`], { env });
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
  return { base, deno };
}
