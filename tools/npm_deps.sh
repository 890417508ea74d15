#!/bin/sh
# npm_deps.sh: install the npm packages the tests and benchmarks compare
# against (tools/npm/package.json, pinned by its package-lock.json:
# onnxruntime-node) into .cache/npm/node_modules, with install scripts off
# (the package ships its CPU binaries).  A quick no-op when the installed
# lock matches.  Without node and npm it tries Debian's nodejs and npm;
# when that fails it says so and exits 0: the tests that need these
# runtimes skip with a message.
cd "$(dirname "$0")/.." || exit 1
dst=.cache/npm
if [ -f "$dst/package-lock.json" ] && cmp -s tools/npm/package-lock.json "$dst/package-lock.json" &&
	[ -d "$dst/node_modules/onnxruntime-node" ]; then
	exit 0
fi
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	sh tools/deps.sh nodejs npm >/dev/null 2>&1
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "deps: npm not found: tests against onnxruntime-node will be skipped" >&2
	exit 0
fi
echo "deps: installing onnxruntime-node into $dst"
rm -rf "$dst.tmp" && mkdir -p "$dst.tmp" &&
	cp tools/npm/package.json tools/npm/package-lock.json "$dst.tmp/" &&
	(cd "$dst.tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) &&
	rm -rf "$dst" && mv "$dst.tmp" "$dst" && exit 0
rm -rf "$dst.tmp"
echo "deps: npm install failed: tests against onnxruntime-node will be skipped" >&2
exit 0
