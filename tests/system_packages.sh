#!/usr/bin/env bash
# Installs the Debian packages named as arguments when they are missing and this user may (root, or
# sudo without a password); otherwise says in one line which tests will lack them. Never fails the run.
set -u
missing=()
for package in "$@"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "note: not a Debian system; install ${missing[*]} for the tests that use them" >&2
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  echo "note: ${missing[*]} not installed and no root: the tests that use them are skipped" >&2
  exit 0
fi
echo "installing ${missing[*]} (Debian packages the tests use) …" >&2
"${sudo[@]}" apt-get update -qq >/dev/null 2>&1
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
  || echo "warning: could not install ${missing[*]}" >&2
exit 0
