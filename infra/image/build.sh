#!/usr/bin/env bash
# Builds the dynamo-fn OCI image on a machine without a container engine or registry access,
# from package registries only:
#   - the runtime libraries Node.js links against (libc6, libgcc-s1, libstdc++6) as Debian
#     packages (apt-get download; unpacked with dpkg-deb, no maintainer scripts run);
#   - the Node.js binary of the `node` npm package (the devDependency every npm script uses);
#   - the app as prebuilt JavaScript, no TypeScript sources and no transpiler: `npm run build`'s
#     bundles (scripts/build.mjs, esbuild from the repository's node_modules; the bundles carry
#     the dependencies they use) in /app/dist: dist/bundles/<function>.mjs for each function
#     and its V8 startup snapshot dist/bundles/<function>.blob (the chart starts these; built
#     by this same node binary, the only one that can run them), dist/bundles/dynamo-fn.mjs
#     (the CLI, the entrypoint) and
#     dist/dgd-apply-overrides.mjs, the override tool /dgd-apply-overrides runs (what a
#     profiling Job's init container installs);
#   - umoci (Debian package) to write the OCI image layout.
# The image: entrypoint `node /app/dist/bundles/dynamo-fn.mjs`, user 65532:65532 (non-root),
# nothing written outside /tmp (mount an emptyDir there: the chart does), so a read-only root
# filesystem works. Its config (OCI field names: User, WorkingDir, Entrypoint, Cmd, Env,
# ExposedPorts, Labels), the repository files copied into /app (appFiles) and the build's
# arguments (buildArgs) come from infra/image/image.json, which the Dockerfile must match
# (test/unit/dockerfile.test.ts).
#
# Usage: infra/image/build.sh OUT_DIR [TAG]
#   OUT_DIR/oci        the OCI image layout (push with: skopeo copy oci:OUT_DIR/oci:TAG docker://REGISTRY/dynamo-fn:TAG)
#   OUT_DIR/rootfs     the unpacked root filesystem of the image (what the entrypoint test chroots into)
# Debian packages are cached in ${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/image/debs/.
set -euo pipefail

out=${1:?usage: infra/image/build.sh OUT_DIR [TAG]}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tag=${2:-$(node -p "require('$repo/package.json').version" 2>/dev/null || sed -n 's/^  "version": "\(.*\)",$/\1/p' "$repo/package.json")}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/dynamo-fn/image
node_bin=$(readlink -f "$repo/node_modules/node/bin/node")

for tool in umoci dpkg-deb apt-get; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool not found (apt-get install umoci)" >&2; exit 1; }
done
[ -x "$node_bin" ] || { echo "build.sh: $repo/node_modules/node/bin/node not found: run npm ci first" >&2; exit 1; }

# image.json, field by field, one value a line (arrays element by element, Labels as key=value).
spec=$repo/infra/image/image.json
keys='User WorkingDir Entrypoint Cmd Env ExposedPorts Labels appFiles buildArgs'
"$node_bin" -e 'const s = require(process.argv[1]); const missing = process.argv.slice(2).filter((k) => s[k] === undefined); if (missing.length > 0) throw new Error(`missing ${missing.join(", ")}`)' "$spec" $keys \
  || { echo "build.sh: $spec is not a valid image spec" >&2; exit 1; }
field() { "$node_bin" -e 'const v = require(process.argv[1])[process.argv[2]]; for (const x of Array.isArray(v) ? v : typeof v === "object" ? Object.entries(v).map(([k, e]) => `${k}=${e}`) : [v]) console.log(x)' "$spec" "$1"; }

rm -rf "$out"
mkdir -p "$out" "$cache/debs"
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT

echo "build.sh: Debian runtime libraries"
(cd "$cache/debs" && for pkg in libc6 libgcc-s1 libstdc++6; do ls "${pkg}"_*.deb >/dev/null 2>&1 || apt-get download "$pkg" >/dev/null; done)
root=$staging/rootfs
mkdir -p "$root"
for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
# Only the shared libraries and the dynamic loader are needed; drop docs, locales and tools.
rm -rf "$root"/usr/share "$root"/usr/bin "$root"/usr/sbin "$root"/sbin "$root"/bin "$root"/usr/libexec "$root"/etc/ld.so.conf.d 2>/dev/null || true
mkdir -p "$root"/etc "$root"/tmp "$root"/usr/local/bin "$root"/app
chmod 1777 "$root"/tmp
cat > "$root"/etc/passwd <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat > "$root"/etc/group <<'GROUP'
root:x:0:
nonroot:x:65532:
GROUP
echo "hosts: files dns" > "$root"/etc/nsswitch.conf

echo "build.sh: Node.js $("$node_bin" --version) from the node npm package"
cp "$node_bin" "$root"/usr/local/bin/node

echo "build.sh: the app (npm run build's bundles) and the override tool (/dgd-apply-overrides)"
# The chart (infra/chart) comes along for `dynamo-fn install` run from the image.
mapfile -t app_files < <(field appFiles)
(cd "$repo" && cp -r --parents "${app_files[@]}" "$root"/app/)
mapfile -t build_args < <(field buildArgs)
# The override tool's shebang names the distroless image's node path (linked below).
(cd "$repo" && "$node_bin" scripts/build.mjs "${build_args[@]}" --outdir "$root/app/dist" >/dev/null)
install -m 0755 "$repo"/infra/image/dgd-apply-overrides "$root"/dgd-apply-overrides
mkdir -p "$root"/nodejs/bin && ln -s /usr/local/bin/node "$root"/nodejs/bin/node

echo "build.sh: OCI image layout (umoci)"
umoci init --layout "$out/oci"
umoci new --image "$out/oci:$tag"
umoci unpack --image "$out/oci:$tag" "$staging/bundle" >/dev/null
rm -rf "$staging/bundle/rootfs" && mv "$root" "$staging/bundle/rootfs"
umoci repack --image "$out/oci:$tag" "$staging/bundle"
config=(--config.user "$(field User)" --config.workingdir "$(field WorkingDir)")
while read -r value; do config+=(--config.entrypoint "$value"); done < <(field Entrypoint)
while read -r value; do config+=(--config.cmd "$value"); done < <(field Cmd)
while read -r value; do config+=(--config.env "$value"); done < <(field Env)
while read -r value; do config+=(--config.exposedports "$value"); done < <(field ExposedPorts)
while read -r value; do config+=(--config.label "$value"); done < <(field Labels)
umoci config --image "$out/oci:$tag" "${config[@]}" \
  --config.label org.opencontainers.image.version="$tag" \
  --author dynamo-fn
umoci gc --layout "$out/oci"
umoci unpack --image "$out/oci:$tag" "$out/bundle" >/dev/null
mv "$out/bundle/rootfs" "$out/rootfs" && cp "$out/bundle/config.json" "$out/runtime-config.json" && rm -rf "$out/bundle"
echo "build.sh: built $out/oci:$tag ($(du -sh "$out/oci" | cut -f1))"
