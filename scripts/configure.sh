#!/usr/bin/env bash
# Shared by scripts/plan and scripts/test: configures build/ with Ninja and the given build type.
#   scripts/configure.sh <build-type> [extra cmake arguments...]
# Re-uses build/ when it already is a Ninja build; starts it afresh (cmake --fresh) otherwise.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_type="$1"
shift

fresh=()
cache="$repo_root/build/CMakeCache.txt"
if [[ -f "$cache" ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$cache"; then
    fresh=(--fresh)
fi

cmake -S "$repo_root" -B "$repo_root/build" -G Ninja "${fresh[@]}" -DCMAKE_BUILD_TYPE="$build_type" "$@"
