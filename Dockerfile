# The dynamo-fn image for users with a container engine and registry access. On a machine with
# neither, infra/image/build.sh builds the same layout from package registries alone (Debian
# packages, the node npm package, umoci).
#   docker build -t REGISTRY/dynamo-fn:0.1.0 . && docker push REGISTRY/dynamo-fn:0.1.0
# Entrypoint: dynamo-fn (e.g. `serve reconcile`); runs as 65532:65532 and writes only to /tmp,
# so a read-only root filesystem works (the chart mounts an emptyDir on /tmp).
# Its user, working directory, entrypoint script, command, environment, ports, labels, the files
# copied into /app and the npm ci flags are those of infra/image/image.json, which build.sh builds
# from; test/unit/dockerfile.test.ts holds the two to it. Only the base images differ (and with
# them the node binary's path and PATH).

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only (tsx runs the TypeScript sources; there is no build step).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY bin ./bin
COPY shared ./shared
COPY functions ./functions
COPY infra/chart ./infra/chart
RUN find . -path ./node_modules -prune -o -name '*.test.ts' -print -delete

# The override tool a profiling Job's init container installs for the profiler
# (/dgd-apply-overrides; shared/profiler/override-tool.ts): one file bundled with esbuild.
FROM node:24-bookworm-slim AS override-tool
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts ./scripts
COPY shared ./shared
RUN node scripts/build.mjs --only dgd-apply-overrides --outdir /out

FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
COPY --from=build /app /app
COPY --from=override-tool /out/dgd-apply-overrides.mjs /app/dist/dgd-apply-overrides.mjs
COPY infra/image/dgd-apply-overrides /dgd-apply-overrides
ENV NODE_ENV=production
LABEL org.opencontainers.image.title="dynamo-fn" org.opencontainers.image.licenses="Apache-2.0"
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/nodejs/bin/node", "/app/bin/dynamo-fn.js"]
CMD ["--help"]
