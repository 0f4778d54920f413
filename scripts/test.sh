#!/usr/bin/env bash
# The whole test suite of the workspace (the library and the CLI), GPU path included, on a
# fresh machine:
#   - installs the software Vulkan driver (Mesa's lavapipe, Debian package mesa-vulkan-drivers)
#     when no Vulkan driver is present, so the GPU tests run even without a GPU;
#   - runs every test with RECTCAST_REQUIRE_GPU=1, so a GPU test fails rather than skips when no
#     adapter opens (set RECTCAST_REQUIRE_GPU=0 to allow skipping);
#   - builds and smoke-runs the benchmarks once, before the suite (their GPU rows on the small
#     scenes only);
#   - runs the library's GPU tests again under each emulated GPU arithmetic (unpredictable
#     rounding and a 2.5-ulp division, flushed subnormals, fused multiply-adds:
#     rectcast::gpu::Emulation), where every result must stay byte-identical to the CPU's;
#   - tests the library built without GPU backends (`default-features = false`);
#   - builds and tests the CLI's optional `parquet` feature too;
#   - builds the docs as docs.rs would, warnings being errors;
#   - tests the playground (`rectcast serve`) in a real headless Chromium, WebGPU through
#     SwiftShader, driven by playwright-core from npm (cli/web/package-lock.json); installs
#     Debian's chromium when there is none (CHROMIUM names another);
#   - builds the Python package (python/) into a virtual environment, .venv, made here with
#     what it needs from PyPI (maturin, numpy, pyarrow, dask, Ray Data, pyspark, pytest), and
#     runs its pytest suite; Spark needs a Java 17 runtime, installed (Debian package
#     default-jre-headless) when there is none.
set -euo pipefail
cd "$(dirname "$0")/.."

# The emulation passes' arguments, into `emulation`: the library's test files that open a GPU
# (found by what they call), not the CPU-only ones, since the emulation changes only the kernels
# a GPU runs; then `--exact` and a `--skip` for each test marked native only.
# (`scripts/test.sh --print-emulation-args` prints them, one a line, and stops: tests/layout.rs
# checks them.)
emulation_args() {
    emulation=()
    local file name
    for file in tests/*.rs; do
        # A file whose doc (`//!`) says so is about what no arithmetic changes (a device's limits).
        grep -q '^//! scripts/test.sh: native only' "$file" && continue
        if grep -qE 'gpu_engine|GpuContext::|Engine::gpu|Backend::(Gpu|Auto)' "$file"; then
            emulation+=(--test "$(basename "$file" .rs)")
        fi
    done
    emulation+=(-- --exact)
    # A test whose doc says so (`/// scripts/test.sh: native only`, above its `#[test]`) is
    # about how the work is split, which no arithmetic changes: those passes skip it by its
    # exact name.
    for name in $(awk '/^\/\/\/ scripts\/test.sh: native only/ { marked = 1 }
                       marked && /^fn / { sub(/^fn /, ""); sub(/\(.*/, ""); print; marked = 0 }' \
                      tests/*.rs); do
        emulation+=(--skip "$name")
    done
}

if [ "${1:-}" = --print-emulation-args ]; then
    emulation_args
    printf '%s\n' "${emulation[@]}"
    exit 0
fi

vulkan_ready() {
    # A Vulkan loader and at least one installable client driver (ICD) manifest.
    # Read the whole list before matching: `grep -q` stops at the first match, and under
    # pipefail ldconfig's broken pipe would then read as "no loader".
    local libraries
    libraries=$(ldconfig -p 2>/dev/null) || true
    grep -q 'libvulkan\.so\.1' <<<"$libraries" || return 1
    for dir in /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
        compgen -G "$dir/*.json" >/dev/null && return 0
    done
    [ -n "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]
}

java_ready() {
    # Spark 4 (python/README.md's Spark snippet, run by the Python tests) runs on Java 17 or later.
    command -v java >/dev/null || return 1
    local version
    version=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
    [ "${version:-0}" -ge 17 ]
}

# What is missing, from Debian's packages: each named with what it is for.
missing=()
vulkan_ready || missing+=(mesa-vulkan-drivers)   # lavapipe, the software Vulkan driver
java_ready || missing+=(default-jre-headless)    # Java 17, for Spark
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || missing+=(chromium)         # the playground's browser
command -v npm >/dev/null || missing+=(npm)      # playwright-core, which drives it
if [ ${#missing[@]} -gt 0 ]; then
    echo "scripts/test.sh: installing ${missing[*]}" >&2
    if ! command -v apt-get >/dev/null; then
        echo "scripts/test.sh: no apt-get here; install ${missing[*]} (Mesa's Vulkan drivers, a Java 17 runtime, Chromium, npm) and retry" >&2
        exit 1
    fi
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A fresh clone's run writes about 4 GB (target/ 2.6 GB, .venv): on a fuller disk the linker dies of a
# bus error mid-build, so say so first.
target_dir="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target_dir"
free_kb=$(df -Pk "$target_dir" | awk 'NR == 2 { print $4 }')
if [ "${free_kb:-0}" -lt $((5 * 1024 * 1024)) ]; then
    echo "scripts/test.sh: warning: $((free_kb / 1024)) MB free where $target_dir is; a fresh run needs about 4 GB" >&2
fi

# Mesa's loader complains on stderr when this is unset (headless machines, CI).
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
export RECTCAST_REQUIRE_GPU="${RECTCAST_REQUIRE_GPU:-1}"

# Each stage says when it starts, so a slow one shows in the log.
stage() {
    echo "scripts/test.sh: [$((SECONDS / 60))m$((SECONDS % 60))s] $*" >&2
}

# Benchmarks first, each run once as a smoke test; the docs; the library without GPU backends;
# the CLI's file tests without the optional Parquet support (they check it says so); then the
# whole suite with it, whose summary closes the log.
stage "the benchmarks, once each"
cargo test --release --locked --benches
stage "the docs"
RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --workspace
stage "the library without GPU backends"
# Unoptimised: its features differ from the suite's, so wgpu and the library build again, in
# half the time of a release build; its one test does little work (and checks overflow too).
cargo test --locked -p rectcast --no-default-features --test cpu_only
stage "the CLI's file tests without Parquet"
cargo test --release --locked --test streaming
stage "the whole suite"
cargo test --release --locked --features rectcast-cli/parquet
emulation_args
for mode in rounding flush fused; do
    stage "the library's GPU tests on a GPU emulating '$mode' arithmetic"
    # The whole suite's packages and features, so that nothing is built again (`-p rectcast`
    # alone would unify its dependencies' features differently, and rebuild wgpu).
    RECTCAST_GPU_EMULATION=$mode cargo test --release --locked --features rectcast-cli/parquet \
        --lib "${emulation[@]}"
done

# The playground in Chromium, against the binary the suite built (with Parquet, so that the
# build is not repeated).
stage "the playground in Chromium"
node_major=$(node --version 2>/dev/null | sed -n 's/^v\([0-9]*\).*/\1/p') || true
if [ "${node_major:-0}" -lt 18 ]; then
    echo "scripts/test.sh: the playground's tests need Node.js 18 or later; found '$(node --version 2>&1)'" >&2
    exit 1
fi
(cd cli/web && npm ci --no-audit --no-fund --silent)
CHROMIUM="$chromium" RECTCAST_BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/rectcast" \
    node cli/web/test/playground.mjs

# The Python package: a venv of its own, the wheel built by maturin, then pytest, whose summary
# closes the log. Its tests compare with the `rectcast` binary built above.
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv || {
        echo "scripts/test.sh: '$python -m venv' failed; on Debian: apt-get install python3-venv" >&2
        exit 1
    }
fi
pip() { .venv/bin/python -m pip --disable-pip-version-check -q "$@"; }
stage "the Python package"
# The wheel users install: abi3 (CPython 3.9 and later) and manylinux2014 (glibc 2.17: RHEL 7
# and 9, Amazon Linux 2023, Ubuntu 20.04, Debian 11 and later), linked by zig from PyPI.
pip install "maturin>=1.9,<2" "ziglang>=0.13"
rm -rf target/wheels
PATH="$PWD/.venv/bin:$PATH" .venv/bin/maturin build --release --locked --strip --zig \
    --compatibility manylinux2014 -m python/Cargo.toml -o target/wheels -i .venv/bin/python
wheel=$(echo target/wheels/rectcast-*-cp39-abi3-manylinux*2014_x86_64*.whl)
[ -f "$wheel" ] || { echo "scripts/test.sh: no abi3 manylinux2014 wheel in target/wheels" >&2; exit 1; }
# Installed as a user with no Rust installs it: a clean venv, its one dependency from PyPI, and
# the README's first snippet.
clean=$(mktemp -d)
"$python" -m venv "$clean/venv"
PATH="$clean/venv/bin:/usr/bin:/bin" CARGO_HOME="$clean/no-cargo" RUSTUP_HOME="$clean/no-rustup" \
    "$clean/venv/bin/python" -m pip --disable-pip-version-check -q install --only-binary :all: "$wheel"
(cd "$clean" && PATH="$clean/venv/bin:/usr/bin:/bin" "$clean/venv/bin/python" -c '
import numpy as np, rectcast
first = rectcast.first_hit(np.array([[-5, 2, 15, 8]], np.float32), np.array([[0, 0, 10, 10]], np.float32))
assert first["rect"].tolist() == [0] and first["t_enter"].tolist() == [0.25], first
print("the wheel works in a clean venv, rectcast", rectcast.__version__)')
rm -rf "$clean"
pip install "$wheel[test]"                      # its dependencies and the test extras
pip install --force-reinstall --no-deps "$wheel" # this build, even at an unchanged version
RECTCAST_BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/rectcast" .venv/bin/pytest python/tests
