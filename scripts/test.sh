#!/usr/bin/env bash
# The whole test run on a fresh machine: install what is missing, then pytest.
#
#     scripts/test.sh                 everything (what .ci/run runs)
#     scripts/test.sh -m "not slow"   the quick run for development
#     scripts/test.sh tests/test_cli.py -k help    any pytest arguments
#
# Every run installs the project into a brand-new, empty virtual environment
# (under $TMPDIR, removed afterwards) and runs pytest from it, so a package
# installed by hand anywhere else on the machine can never make the suite pass:
# what the tests import must be declared in pyproject.toml. pip's download
# cache is reused, so a warm run downloads nothing.
#
# What the tests need beyond Python packages, and where it comes from:
#   - PostgreSQL 15 server binaries (Debian's postgresql-15): the ladder's
#     storage tests start a throw-away cluster of their own (tests/postgres_support.py).
#   - Chromium (Debian's chromium): the web page's tests drive it with Playwright.
#   - protoc (Debian's protobuf-compiler): the Go and Rust starter bots generate
#     their protocol code with it (Go, Rust, Java, Node come with the machine).
#   - bubblewrap (Debian's bubblewrap): the sandbox for local bots that must run as
#     root (server/oddtrick_referee/competitions/entries/sandbox.py says why this tool).
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
if ! command -v bwrap >/dev/null; then
    apt_packages+=(bubblewrap)
fi
if ((${#apt_packages[@]})); then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "installing ${apt_packages[*]} with apt-get" >&2
        # Wait for another apt or dpkg process (an unattended upgrade, a second test
        # run) to let go of its lock rather than failing on it.
        apt_wait=(-o DPkg::Lock::Timeout=900)
        apt-get "${apt_wait[@]}" update -qq
        DEBIAN_FRONTEND=noninteractive apt-get "${apt_wait[@]}" install -y -qq \
            --no-install-recommends "${apt_packages[@]}" >/dev/null
    else
        echo "missing ${apt_packages[*]}: install them (Debian: apt-get install ${apt_packages[*]}); their tests will skip" >&2
    fi
fi

venv="$(mktemp -d "${TMPDIR:-/tmp}/oddtrick-test-venv.XXXXXX")"
trap 'rm -rf "$venv"' EXIT
# Other users (the tests run some bots as nobody) may look up files through it.
chmod 755 "$venv"
echo "installing the project and its [dev] extra into a new virtual environment ($venv)" >&2
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e ".[dev]"
# The environment's commands (python, oddtrick) come first for every process the
# tests start, exactly as after a user's `source .venv/bin/activate`.
export VIRTUAL_ENV="$venv"
export PATH="$venv/bin:$PATH"
# Two test processes by default (ODDTRICK_TEST_PROCESSES=0: one, in this process, as
# pytest's -s or --pdb need): each file runs whole on one of them, so a file's fixtures
# are made once. The slowest tests are named at the end, so a run that nears its time
# budget says where it went.
processes="${ODDTRICK_TEST_PROCESSES:-2}"
"$venv/bin/python" -m pytest -n "$processes" --dist loadfile --durations=15 "$@"
