#!/usr/bin/env bash
# Installs the Debian 12 packages dnnplan builds with, if any is missing; with --python, also what
# the Python module and its tests need (scripts/test); with --fuzz, Clang and its runtime
# libraries (libFuzzer, the sanitizers) for scripts/fuzz.
# apt-get update runs only when something has to be installed.
set -euo pipefail

packages=(libeigen3-dev libboost-math-dev catch2 nlohmann-json3-dev libbenchmark-dev cmake ninja-build g++)
if [[ "${1:-}" == "--python" ]]; then
    packages+=(python3-dev pybind11-dev python3-numpy python3-pytest python3-distributed python3-tqdm)
fi
if [[ "${1:-}" == "--fuzz" ]]; then
    packages+=(clang libclang-rt-14-dev)
fi

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
    if [[ "$status" != "installed" ]]; then
        missing+=("$package")
    fi
done

if ((${#missing[@]} == 0)); then
    echo "install-deps: all build dependencies are installed"
    exit 0
fi

if ((EUID == 0)); then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "install-deps: missing packages: ${missing[*]}" >&2
    echo "install-deps: installing them needs root, and sudo is not available;" >&2
    echo "install-deps: run this script as root, or install them with: apt-get install ${missing[*]}" >&2
    exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
