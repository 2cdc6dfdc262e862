#!/usr/bin/env bash
# Install, or name, the Debian packages the tests drive
# (scripts/test-packages.txt, the one list `make test` and .ci/run share).
#
#   TEST_SETUP=install  install what is missing with apt-get (sudo when not
#                       root); the default as root and with CI=true
#   TEST_SETUP=check    only say what is missing and which tests will skip;
#                       the default otherwise
#   TEST_SETUP=skip     do nothing
#
# With TEST_SETUP=summary it prints again, after the tests, which skipped
# for want of a package and the one command that installs them.
set -euo pipefail
cd "$(dirname "$0")/.."
LIST=scripts/test-packages.txt

mode=${TEST_SETUP:-}
if [ -z "$mode" ]; then
	if [ "$(id -u)" = 0 ] || [ "${CI:-}" = true ]; then mode=install; else mode=check; fi
fi
[ "$mode" = skip ] && exit 0

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "test-setup: not a Debian system (no dpkg-query); install the packages of $LIST by hand, tests whose tool is missing skip"
	exit 0
fi

missing=()
why=()
while read -r pkg rest; do
	[ -z "$pkg" ] && continue
	case "$pkg" in \#*) continue ;; esac
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$pkg")
		why+=("  $pkg: ${rest#\# }")
	fi
done <"$LIST"

if [ ${#missing[@]} -eq 0 ]; then
	[ "$mode" = summary ] || echo "test-setup: every package the tests drive is installed"
	exit 0
fi

say_missing() {
	echo "test-setup: ${#missing[@]} Debian packages are not installed; these tests skip (fail with CI=true):"
	printf '%s\n' "${why[@]}"
	echo "Install them with:  sudo apt-get install -y --no-install-recommends ${missing[*]}"
	echo "(or run: sudo make test, or TEST_SETUP=install make test)"
}

case "$mode" in
check | summary)
	say_missing
	exit 0
	;;
install)
	sudo=()
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || { echo "test-setup: TEST_SETUP=install needs root or sudo"; say_missing; exit 1; }
		sudo=(sudo)
	fi
	echo "test-setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# tshark asks whether non-root users may capture; answer first so the
	# prompt never blocks.
	echo "wireshark-common wireshark-common/install-setuid boolean false" | "${sudo[@]}" debconf-set-selections
	"${sudo[@]}" apt-get update
	"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
	;;
*)
	echo "test-setup: TEST_SETUP=$mode: want install, check or skip"
	exit 2
	;;
esac
