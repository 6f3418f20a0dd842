# The dynamo-fn image for users with a container engine and registry access. On a machine with
# neither, infra/image/build.sh builds the same layout from package registries alone (Debian
# packages, the node npm package, umoci).
#   docker build -t REGISTRY/dynamo-fn:0.1.0 . && docker push REGISTRY/dynamo-fn:0.1.0
# It holds prebuilt JavaScript only, no TypeScript sources and no transpiler: `npm run build`'s
# bundles in /app/dist (scripts/build.mjs): dist/bundles/<function>.mjs for each function, which
# the chart runs (`node /app/dist/bundles/reconcile.mjs`), dist/bundles/dynamo-fn.mjs, the CLI
# and the entrypoint (e.g. `install`, `crds`, `serve reconcile`), and the override tool.
# Runs as 65532:65532 and writes only to /tmp, so a read-only root filesystem works (the chart
# mounts an emptyDir on /tmp).
# Its user, working directory, entrypoint, command, environment, ports, labels, the files copied
# into /app and the build's arguments are those of infra/image/image.json, which build.sh builds from; test/unit/dockerfile.test.ts holds the two
# to it. Only the base images differ (and with them the node binary's path and PATH).

# The bundles (and the override tool a profiling Job's init container installs for the
# profiler, /dgd-apply-overrides; shared/profiler/override-tool.ts), built with esbuild, a
# devDependency: every dependency is installed here, and the bundles carry what they use.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts ./scripts
COPY shared ./shared
COPY functions ./functions
RUN node scripts/build.mjs --no-sourcemap --outdir /out --no-snapshot-blobs

# Each function's V8 startup snapshot (/app/dist/bundles/<function>.blob, which the chart starts),
# built here by the runtime image's own Node.js from the bundles above: Node runs a blob only
# on the binary that built it, and this node may not be the build stage's. No shell in
# distroless, so the script runs in exec form, as root to write into /app/dist.
FROM gcr.io/distroless/nodejs24-debian12:nonroot AS snapshots
USER 0:0
COPY --from=build /out /app/dist
COPY scripts/build-snapshot-blobs.mjs /build-snapshot-blobs.mjs
RUN ["/nodejs/bin/node", "/build-snapshot-blobs.mjs", "/app/dist/bundles"]

FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
# The chart, for `dynamo-fn install` run from the image.
COPY infra/chart ./infra/chart
COPY --from=snapshots /app/dist /app/dist
COPY infra/image/dgd-apply-overrides /dgd-apply-overrides
# Node's compile cache of the bundles, written by scripts/build.mjs into /app/dist/compile-cache
# (read-only here): used when this image's Node.js is the build stage's version, skipped otherwise.
ENV NODE_ENV=production NODE_COMPILE_CACHE=/app/dist/compile-cache NODE_COMPILE_CACHE_PORTABLE=1
LABEL org.opencontainers.image.title="dynamo-fn" org.opencontainers.image.licenses="Apache-2.0"
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/nodejs/bin/node", "/app/dist/bundles/dynamo-fn.mjs"]
CMD ["--help"]
