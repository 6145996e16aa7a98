#!/usr/bin/env bash
# Replaces the vendored Swagger UI with an exact npm release:
#   bash webui/swagger-ui/update.sh 5.35.0
# npm pack checks the tarball against the registry's integrity hash; only the
# files the reference page loads (and their licences) are kept. Change
# webui.SwaggerUIVersion to the same version afterwards.
set -euo pipefail
version="${1:?usage: update.sh VERSION}"
dir="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "swagger-ui-dist@$version" >/dev/null && tar xzf "swagger-ui-dist-$version.tgz")
for f in swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui.css LICENSE NOTICE; do
  cp "$tmp/package/$f" "$dir/$f"
done
echo "$version" >"$dir/VERSION"
(cd "$dir" && sha256sum swagger-ui-bundle.js swagger-ui.css >SHA256SUMS)
echo "swagger-ui-dist $version vendored into $dir"
