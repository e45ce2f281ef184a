# Sourced by scripts/test: a Python venv with the tools the tests run
# against trawl's output (warcio, cdxj-indexer, pywb, wacz, duckdb,
# networkx; pinned in scripts/python-tools.txt), kept beside the build
# output so a machine installs them once (~30 s from PyPI). The tests find it by TRAWL_VENV.
# And wget (Debian package), whose --warc-file archives `import warc` reads.
if ! command -v wget >/dev/null 2>&1; then
    echo "setup: installing wget" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq wget >/dev/null
fi
export TRAWL_VENV="${TRAWL_VENV:-$HOME/.cache/trawl-venv}"
_tools="$(dirname "${BASH_SOURCE[0]}")/python-tools.txt"
if ! cmp -s "$_tools" "$TRAWL_VENV/.installed" 2>/dev/null; then
    echo "setup: installing the test tools into $TRAWL_VENV" >&2
    if ! python3 -m venv --help >/dev/null 2>&1; then
        SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        $SUDO apt-get update -qq && $SUDO apt-get install -y -qq python3-venv >/dev/null
    fi
    rm -rf "$TRAWL_VENV"
    python3 -m venv "$TRAWL_VENV"
    "$TRAWL_VENV/bin/pip" install -q --disable-pip-version-check -r "$_tools"
    cp "$_tools" "$TRAWL_VENV/.installed"
fi
unset _tools
