#!/usr/bin/env bash
# installcheck: run the README's install and demo commands, as written, on a
# clean clone of this checkout's HEAD, then check what they promise: a
# statically linked bin/npuprof, a demo that analyzes the committed trace,
# and `make dist`'s two static binaries with checksums that verify.
#
# The one change to the README's text: the clone's URL becomes this
# checkout (CI has no network but the package registries), so the commands
# run on exactly the commit under test.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# block SECTION: the first fenced block under the README heading "## SECTION"
block() {
	awk -v h="## $1" '
		$0 == h { in_sec = 1; next }
		in_sec && /^## / { exit }
		in_sec && /^```/ { if (in_code) exit; in_code = 1; next }
		in_sec && in_code { print }
	' "$repo/README.md"
}

install=$(block Install)
demo=$(block "Try it" | grep -E '^make demo' | sed 's/ *#.*//')
if [ -z "$install" ] || ! grep -q '^git clone ' <<<"$install"; then
	echo "installcheck: README.md's Install section has no fenced block starting with git clone" >&2
	exit 1
fi
if [ -z "$demo" ]; then
	echo "installcheck: README.md's \"Try it\" block has no make demo line" >&2
	exit 1
fi
url=$(grep -m1 '^git clone ' <<<"$install" | awk '{print $3}')
# the clone names its folder after the URL's last part (npuprof.git ->
# npuprof), as the README's cd expects: a link of that name to this checkout
mkdir "$work/src"
ln -s "$repo" "$work/src/${url##*/}"
script=${install//"$url"/"$work/src/${url##*/}"}

echo "installcheck: in $work, the README's install commands:"
sed 's/^/    /' <<<"$install"
mkdir "$work/home" && (cd "$work/home" && bash -euo pipefail -c "$script")
clone="$work/home/npuprof"
[ -x "$clone/bin/npuprof" ] || { echo "installcheck: no bin/npuprof after the install commands" >&2; exit 1; }

kind=$(file -b "$clone/bin/npuprof")
echo "installcheck: bin/npuprof: $kind"
grep -q 'statically linked' <<<"$kind" || { echo "installcheck: bin/npuprof is not statically linked" >&2; exit 1; }

echo "installcheck: $demo"
out=$(cd "$clone" && bash -euo pipefail -c "$demo" 2>"$work/demo.err") || {
	cat "$work/demo.err" >&2
	echo "installcheck: $demo failed" >&2
	exit 1
}
grep -q 'make demo: building' "$work/demo.err" || { echo "installcheck: make demo does not say what it is doing" >&2; exit 1; }
grep -q 'ep-fc1-cumsum' <<<"$out" || { echo "installcheck: the demo's summary does not name the committed trace" >&2; exit 1; }
grep -Eq 'Plan|Findings' <<<"$out" || { echo "installcheck: the demo printed no findings or plan" >&2; exit 1; }

echo "installcheck: make dist"
(cd "$clone" && make --no-print-directory dist >/dev/null)
for pair in amd64:x86-64 arm64:aarch64; do
	arch=${pair%%:*} want=${pair#*:}
	kind=$(file -b "$clone/dist/npuprof-linux-$arch")
	echo "installcheck: dist/npuprof-linux-$arch: $kind"
	grep -q "$want" <<<"$kind" && grep -q 'statically linked' <<<"$kind" || {
		echo "installcheck: dist/npuprof-linux-$arch is not a static $want binary" >&2
		exit 1
	}
done
(cd "$clone/dist" && sha256sum --quiet -c SHA256SUMS)
echo "installcheck: ok"
