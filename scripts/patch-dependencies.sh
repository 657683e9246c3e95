#!/usr/bin/env bash
# Applies patches/<package>+<version>.patch to node_modules/<package> (npm's postinstall, and
# scripts/ensure-deps.sh for a node_modules installed before a patch existed). Each patch fixes
# an upstream bug that is still open upstream; its comments cite the report. A patch is written
# against one exact version, pinned in package.json: when the installed version differs, this
# stops the install, so whoever bumps the version reviews the patch against the new code.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "[patches] $*" >&2; exit 1; }
command -v patch >/dev/null 2>&1 || fail "the 'patch' program is missing (apt-get install patch)"

shopt -s nullglob
for file in patches/*.patch; do
  name=$(basename "$file" .patch)
  package=${name%+*}
  wanted=${name##*+}
  manifest="node_modules/$package/package.json"
  [[ -f $manifest ]] || fail "$file: $package is not installed"
  installed=$(node -p "require('./$manifest').version")
  [[ $installed == "$wanted" ]] ||
    fail "$file was written for $package $wanted, but $installed is installed: review the patch against $installed (the upstream reports it cites may be fixed), then rename it"
  if patch --dry-run --reverse --force --silent -p1 -d "node_modules/$package" <"$file" >/dev/null 2>&1; then
    continue # applied already
  fi
  patch --forward --silent -p1 -d "node_modules/$package" <"$file" ||
    fail "$file no longer applies to $package $installed"
  echo "[patches] applied $file"
done
