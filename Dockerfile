# Permafrost images: one Dockerfile, a target per process.
#
#   docker build --target master   -t permafrost-master .
#   docker build --target worker   -t permafrost-worker .    (carries the zpaq binary)
#   docker build --target catalog  -t permafrost-catalog .
#   docker build --target operator -t permafrost-operator .
#
# Every dependency (npm packages, DuckDB's native addon, the module graph) is cached at
# build time, so a container starts with no network. Processes run as the unprivileged
# user `permafrost` (uid 10001) with Deno's permissions named, never -A. Settings come
# from PERMAFROST_* variables (see the README's configuration tables).
#
# BASE_IMAGE and DENO_IMAGE default to the official public images; a build machine with
# no registry passes its own (tests/e2e/deploy: a debootstrap'd Debian and the local deno).

ARG BASE_IMAGE=debian:bookworm-slim
ARG DENO_IMAGE=denoland/deno:bin-2.9.6

FROM ${DENO_IMAGE} AS deno

# ---- build: the code and its cached dependencies -------------------------------------
FROM ${BASE_IMAGE} AS build
COPY --from=deno /deno /usr/local/bin/deno
# The bundled roots, and the system's for a base image that adds its own (a proxy's CA).
ENV DENO_DIR=/app/.deno DENO_NO_UPDATE_CHECK=1 DENO_TLS_CA_STORE=mozilla,system
WORKDIR /app
COPY . .
# Only the graph of the entry points (dynamic imports included), not the test-only
# packages of deno.json.
RUN deno cache --frozen main.ts master/serve.ts worker/serve.ts catalog/serve.ts operator/main.ts

# ---- runtime: what every process image shares -----------------------------------------
FROM ${BASE_IMAGE} AS runtime
RUN groupadd --system --gid 10001 permafrost \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/permafrost --create-home permafrost \
 && mkdir -p /data && chown permafrost:permafrost /data
COPY --from=deno /deno /usr/local/bin/deno
COPY --from=build --chown=permafrost:permafrost /app /app
ENV DENO_DIR=/app/.deno DENO_NO_UPDATE_CHECK=1 \
    PERMAFROST_STATE_DIR=/var/lib/permafrost/state
WORKDIR /data
USER permafrost

# ---- master: master [--host] [--port] --------------------------------------------------
FROM runtime AS master
ENV PERMAFROST_MASTER_DATA_DIR=/var/lib/permafrost/master
EXPOSE 8700
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
  CMD ["deno", "run", "-q", "--allow-net=127.0.0.1", "--allow-env=PERMAFROST_MASTER_PORT", "/app/internal/healthcheck.ts", "PERMAFROST_MASTER_PORT", "8700"]
ENTRYPOINT ["deno", "run", "-q", "--allow-read", "--allow-write", "--allow-ffi", "--allow-net", \
  "--allow-env=PERMAFROST_*,AWS_*,AZURE_*,GOOGLE_APPLICATION_CREDENTIALS,STORAGE_EMULATOR_HOST,GCE_METADATA_HOST,XDG_STATE_HOME,HOME", \
  "/app/main.ts", "master"]

# ---- worker: worker --master URL [--host] [--port] -------------------------------------
FROM runtime AS worker
USER root
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends zpaq >/dev/null \
 && rm -rf /var/lib/apt/lists/*
USER permafrost
EXPOSE 8701
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
  CMD ["deno", "run", "-q", "--allow-net=127.0.0.1", "--allow-env=PERMAFROST_WORKER_PORT", "/app/internal/healthcheck.ts", "PERMAFROST_WORKER_PORT", "8701"]
ENTRYPOINT ["deno", "run", "-q", "--allow-read", "--allow-write", "--allow-ffi", "--allow-net", \
  "--allow-env=PERMAFROST_*,AWS_*,AZURE_*,GOOGLE_APPLICATION_CREDENTIALS,STORAGE_EMULATOR_HOST,GCE_METADATA_HOST,XDG_STATE_HOME,HOME", \
  "--allow-run=zpaq", "/app/main.ts", "worker"]

# ---- catalog: catalog serve [--host] [--port] -------------------------------------------
FROM runtime AS catalog
ENV PERMAFROST_CATALOG_DB=/var/lib/permafrost/catalog/catalog.db PERMAFROST_CATALOG_HOST=0.0.0.0
RUN mkdir -p /var/lib/permafrost/catalog
EXPOSE 8800
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
  CMD ["deno", "run", "-q", "--allow-net=127.0.0.1", "--allow-env=PERMAFROST_CATALOG_PORT", "/app/internal/healthcheck.ts", "PERMAFROST_CATALOG_PORT", "8800"]
ENTRYPOINT ["deno", "run", "-q", "--allow-read", "--allow-write", "--allow-ffi", "--allow-net", \
  "--allow-env=PERMAFROST_*,AWS_*,AZURE_*,GOOGLE_APPLICATION_CREDENTIALS,STORAGE_EMULATOR_HOST,GCE_METADATA_HOST,XDG_STATE_HOME,HOME", \
  "/app/main.ts", "catalog", "serve"]

# ---- operator: watches PermafrostJob objects (Kubernetes) -------------------------------
FROM runtime AS operator
ENTRYPOINT ["deno", "run", "-q", "--allow-read=/var/run/secrets/kubernetes.io", "--allow-net", \
  "--allow-env=PERMAFROST_*,KUBERNETES_SERVICE_HOST,KUBERNETES_SERVICE_PORT", "/app/operator/main.ts"]
