#!/bin/sh
# deps.sh PKG...: install the Debian packages that are missing; a quick no-op
# when all are present.  Uses sudo when not root; runs apt-get update first.
missing=
for p in "$@"; do
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$s" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || exit 1
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing || exit 1
