#!/usr/bin/env bash
# Refresh the vendored converse.js files (make webclient). The files are
# committed, so builds, CI and `go run` never need npm; this script is only
# for moving to another release: set CONVERSE_VERSION in the Makefile, run
# `make webclient`, try the client (README "Team chat"), commit.
set -euo pipefail
version="${1:?usage: vendor.sh <converse.js version>}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "converse.js@$version" >/dev/null && tar xzf "converse.js-$version.tgz")
src="$work/package/dist"
dst="$here/dist"
rm -rf "$dst"
mkdir -p "$dst/images/logo" "$dst/webfonts"
# Only what the client loads with our settings: the bundle, its styles,
# the emoji table (fetched when the picker opens), the fonts and images its
# CSS and login screen use. Source maps, locale chunks (English only),
# OMEMO and sounds are left out.
cp "$src/converse.min.js" "$src/converse.min.css" "$src/emoji.json" "$dst/"
cp "$src/webfonts/"*.ttf "$dst/webfonts/"
cp "$src/images/favicon.ico" "$dst/images/"
cp -r "$src/images/custom_emojis" "$dst/images/"
cp "$src/images/logo/conversejs-filled.svg" "$dst/images/logo/"
cp "$work/package/LICENSE" "$dst/LICENSE"
echo "converse.js@$version" > "$dst/VERSION"
du -sh "$dst"
