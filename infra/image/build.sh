#!/usr/bin/env bash
# Builds the dynamo-fn OCI image on a machine without a container engine or registry access,
# from package registries only:
#   - the runtime libraries Node.js links against (libc6, libgcc-s1, libstdc++6) as Debian
#     packages (apt-get download; unpacked with dpkg-deb, no maintainer scripts run);
#   - the Node.js binary of the `node` npm package (the devDependency every npm script uses);
#   - the app and its production dependencies (npm ci --omit=dev, from the npm cache);
#   - umoci (Debian package) to write the OCI image layout;
#   - /dgd-apply-overrides, the override tool a profiling Job's init container installs
#     (esbuild of the repository's node_modules bundles it).
# The image: entrypoint `node /app/bin/dynamo-fn.js`, user 65532:65532 (non-root), nothing
# written outside /tmp (mount an emptyDir there: the chart does), so a read-only root
# filesystem works.
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

for tool in umoci dpkg-deb apt-get npm; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool not found (apt-get install umoci)" >&2; exit 1; }
done
[ -x "$node_bin" ] || { echo "build.sh: $repo/node_modules/node/bin/node not found: run npm ci first" >&2; exit 1; }

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

echo "build.sh: the app and its production dependencies"
cp "$repo"/package.json "$repo"/package-lock.json "$root"/app/
cp -r "$repo"/bin "$repo"/shared "$repo"/functions "$root"/app/
# The chart comes along for `dynamo-fn install` run from the image.
mkdir -p "$root"/app/infra && cp -r "$repo"/infra/chart "$root"/app/infra/
find "$root"/app -name '*.test.ts' -delete
(cd "$root"/app && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
rm -f "$root"/app/package-lock.json

echo "build.sh: the override tool (/dgd-apply-overrides, /app/dist/dgd-apply-overrides.mjs)"
# What a profiling Job's init container runs to install our spec.overrides.dgd merge for the
# profiler (shared/profiler/override-tool.ts); its shebang names the distroless image's node path.
(cd "$repo" && "$node_bin" scripts/build.mjs --only dgd-apply-overrides --outdir "$root/app/dist" >/dev/null)
install -m 0755 "$repo"/infra/image/dgd-apply-overrides "$root"/dgd-apply-overrides
mkdir -p "$root"/nodejs/bin && ln -s /usr/local/bin/node "$root"/nodejs/bin/node

echo "build.sh: OCI image layout (umoci)"
umoci init --layout "$out/oci"
umoci new --image "$out/oci:$tag"
umoci unpack --image "$out/oci:$tag" "$staging/bundle" >/dev/null
rm -rf "$staging/bundle/rootfs" && mv "$root" "$staging/bundle/rootfs"
umoci repack --image "$out/oci:$tag" "$staging/bundle"
umoci config --image "$out/oci:$tag" \
  --config.user 65532:65532 \
  --config.workingdir /app \
  --config.entrypoint /usr/local/bin/node --config.entrypoint /app/bin/dynamo-fn.js \
  --config.cmd --help \
  --config.env PATH=/usr/local/bin:/usr/bin:/bin \
  --config.env NODE_ENV=production \
  --config.exposedports 8080/tcp \
  --config.label org.opencontainers.image.title=dynamo-fn \
  --config.label org.opencontainers.image.version="$tag" \
  --config.label org.opencontainers.image.licenses=Apache-2.0 \
  --author dynamo-fn
umoci gc --layout "$out/oci"
umoci unpack --image "$out/oci:$tag" "$out/bundle" >/dev/null
mv "$out/bundle/rootfs" "$out/rootfs" && cp "$out/bundle/config.json" "$out/runtime-config.json" && rm -rf "$out/bundle"
echo "build.sh: built $out/oci:$tag ($(du -sh "$out/oci" | cut -f1))"
