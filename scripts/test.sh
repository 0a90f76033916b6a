#!/usr/bin/env bash
# The whole test run on a fresh machine: install what is missing, then pytest.
#
# What the tests need beyond Python packages, and where it comes from:
#   - PostgreSQL 15 server binaries (Debian's postgresql-15): the ladder's
#     storage tests start a throw-away cluster of their own (tests/postgres_support.py).
#   - Chromium (Debian's chromium): the web page's tests drive it with Playwright.
#   - protoc (Debian's protobuf-compiler): the Go and Rust starter bots generate
#     their protocol code with it (Go, Rust, Java, Node come with the machine).
# Under CI=true a missing component is an error, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=()
if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    apt_packages+=(postgresql)
fi
if ! command -v chromium >/dev/null; then
    apt_packages+=(chromium)
fi
if ! command -v protoc >/dev/null; then
    apt_packages+=(protobuf-compiler)
fi
if ((${#apt_packages[@]})); then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "installing ${apt_packages[*]} with apt-get" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_packages[@]}" >/dev/null
    else
        echo "missing ${apt_packages[*]}: install them (Debian: apt-get install ${apt_packages[*]}); their tests will skip" >&2
    fi
fi

python3 -m pip install -q -e ".[dev]"
exec python3 -m pytest "$@"
