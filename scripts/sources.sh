# shellcheck shell=bash
# Sourced by build.sh and typecheck.sh: the sources the service and the tests are built from, and
# the stamp of a set of sources (path, size and modification time of each file), which tells
# whether anything changed since the last build or check.
# shellcheck disable=SC2034 # used by the scripts that source this
service_sources=(src ledger consumers migrations test scripts tsconfig.json package-lock.json)

stamp() { find "$@" -type f -printf '%p\t%s\t%T@\n' 2>/dev/null | sort | sha1sum | cut -d' ' -f1; }
