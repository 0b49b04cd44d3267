#!/usr/bin/env bash
# shellcheck disable=SC2329  # the step functions run through `timeout bash -c` (exported with export -f)
# Check the CUDA backend on a machine with an NVIDIA GPU and no package index, in under 8 minutes:
# install opweave (no dependencies), then `opweave doctor`, the CUDA tests, bench/cuda.py and
# `opweave conformance --backend cuda --profile quick`. A failing step does not stop the others; the
# exit status is 0 only if every step passed. Every log goes to one folder: $OUT if set, else cuda-check-logs/.
#
# The machine is expected to hold Python 3.12 with PyTorch (CUDA), cuda-bindings, cuda-pathfinder, nvidia-cublas,
# nvidia-cuda-nvrtc, nvidia-nccl-cu13, mpi4py, NumPy, SciPy, pluggy, ml_dtypes, mpmath, pytest and hypothesis.
# Whatever else is needed travels as wheels in $WHEELS (default .whl/ in the repository), filled beforehand on a
# machine with an index (mpich: the MPI library mpi4py needs for the NCCL test's process group, about 13 MB):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl cffi pycparser wheel mpich
# The mpich wheel is not pip-installed (pip --target drops its lib/ folder): its libraries are unpacked into
# $SITE/mpich-lib, which is on LD_LIBRARY_PATH. The NCCL smoke test (a world of one process, every collective
# through init_process_group("nccl")) runs in the tests step: tests/cuda/test_nccl.py runs tests/cuda/nccl_smoke.py.
#
# The tests step includes the profiler with CUDA event timing and device memory (tests/cuda/test_profiler_gpu.py).
# While doctor and the tests run, the kernel cache is filled in the background (scripts/cuda_compile_all.py for the
# device's own sm_XY, COMPILE_JOBS processes at low priority, at most COMPILE_TIMEOUT seconds), so that the benchmark
# and conformance find most cubins built; the bench waits for it. (.whl/ is git-ignored: a tool that copies the
# working tree must be told to carry it.)
#
# Usage: [OUT=dir] [WHEELS=dir] [PYTHON=python3] scripts/cuda_check.sh
# Step time limits in seconds (with the 15 s of the environment step, and the background compile overlapping doctor
# and the tests, at most 15 + 35 + max(25 + 100, 150) + 90 + 170 = 460 s, 7.7 minutes):
# INSTALL_TIMEOUT=35 DOCTOR_TIMEOUT=25 TESTS_TIMEOUT=100 COMPILE_TIMEOUT=150 BENCH_TIMEOUT=90 CONFORMANCE_TIMEOUT=170.
# Logs (10 files at most): environment, install, compile, doctor, tests, bench, conformance (.log), conformance.json,
# summary.log.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
LOGS=${OUT:-cuda-check-logs}
mkdir -p "$LOGS" || exit 2
LOGS=$(cd "$LOGS" && pwd)
WHEELS=${WHEELS:-.whl}
PYTHON=${PYTHON:-python3}
SITE=${SITE:-/tmp/opweave-cuda-check-site}
export PYTHONUNBUFFERED=1
export OPWEAVE_HYPOTHESIS_PROFILE=${OPWEAVE_HYPOTHESIS_PROFILE:-ci}
SUMMARY="$LOGS/summary.log"
: >"$SUMMARY"
failed=0

# step NAME TIMEOUT COMMAND...: run COMMAND (a program or an exported function) with a time limit, its output
# (stdout and stderr) in $LOGS/NAME.log, and one line in the summary.
step() {
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS status
    echo "== $name (limit ${limit}s): $*"
    timeout -k 5 "$limit" bash -c '"$@"' "$name" "$@" >"$LOGS/$name.log" 2>&1
    status=$?
    local took=$((SECONDS - start))
    if [ "$status" -eq 0 ]; then
        echo "PASS $name (${took}s)" | tee -a "$SUMMARY"
    else
        if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
            echo "TIMEOUT $name after ${took}s (limit ${limit}s)" | tee -a "$SUMMARY"
        else
            echo "FAIL $name: exit $status (${took}s)" | tee -a "$SUMMARY"
        fi
        tail -n 25 "$LOGS/$name.log"
        failed=1
    fi
    return "$status"
}

environment() {
    date -u
    uname -a
    nvidia-smi || echo "nvidia-smi: not found"
    "$PYTHON" --version
    "$PYTHON" - <<'EOF'
import importlib.metadata as md
for name in ("torch", "cuda-bindings", "cuda-pathfinder", "nvidia-cublas", "nvidia-cuda-nvrtc", "nvidia-nccl-cu13",
             "mpi4py", "numpy", "cffi", "pycparser", "pytest", "hypothesis", "ml_dtypes", "scipy", "pluggy", "setuptools"):
    try:
        print(f"{name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"{name}: not installed")
EOF
}

# The wheels go to a folder of their own on PYTHONPATH; opweave itself is installed without dependencies and without
# build isolation (no index): editable first, then a plain install.
install() {
    if compgen -G "$WHEELS/*.whl" >/dev/null; then
        local wheels=()
        mapfile -t wheels < <(compgen -G "$WHEELS/*.whl" | grep -v '/mpich-')
        if [ "${#wheels[@]}" -gt 0 ]; then
            "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
                "${wheels[@]}" || return 1
        fi
        unpack_mpich || return 1
    else
        echo "no wheels in $WHEELS (cffi must be installed already)"
    fi
    "$PYTHON" -m pip install -q --no-index --no-deps --no-build-isolation -e "$ROOT" \
        || "$PYTHON" -m pip install -q --no-index --no-deps --no-build-isolation "$ROOT" \
        || link_source_tree || return 1
    "$PYTHON" -c "import opweave, cffi; print('opweave', opweave.__file__); print('cffi', cffi.__version__)"
}

# The shared libraries of an mpich wheel in $WHEELS, unpacked into $SITE/mpich-lib (on LD_LIBRARY_PATH).
unpack_mpich() {
    local wheel
    wheel=$(compgen -G "$WHEELS/mpich-*.whl" | head -n 1)
    [ -n "$wheel" ] || return 0
    "$PYTHON" - "$wheel" "$SITE/mpich-lib" <<'PY'
import os
import sys
import zipfile

wheel, target = sys.argv[1:3]
os.makedirs(target, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        head, sep, rest = info.filename.partition(".data/data/lib/")
        if not sep or not rest or info.is_dir():
            continue
        path = os.path.join(target, rest)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with z.open(info) as src, open(path, "wb") as dst:
            dst.write(src.read())
        os.chmod(path, 0o755)
print("mpich libraries in", target)
PY
}

# Without a build backend that can make wheels (an old setuptools, no `wheel`): link each package of pyproject.toml's
# package-dir into $SITE and write a .dist-info holding its entry points, which is all the plugins and the
# conformance command need to be found.
link_source_tree() {
    echo "pip could not build opweave: linking the source tree into $SITE instead"
    "$PYTHON" - "$ROOT" "$SITE" <<'PY'
import os
import sys
import tomllib

root, site = sys.argv[1:3]
with open(os.path.join(root, "pyproject.toml"), "rb") as f:
    project = tomllib.load(f)
os.makedirs(site, exist_ok=True)
for package, folder in project["tool"]["setuptools"]["package-dir"].items():
    link = os.path.join(site, package)
    if os.path.islink(link):
        os.unlink(link)
    os.symlink(os.path.join(root, folder), link)
meta = project["project"]
info = os.path.join(site, f"{meta['name']}-{meta['version']}.dist-info")
os.makedirs(info, exist_ok=True)
with open(os.path.join(info, "METADATA"), "w") as f:
    f.write(f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n")
groups = dict(meta.get("entry-points", {}))
if meta.get("scripts"):
    groups["console_scripts"] = meta["scripts"]
with open(os.path.join(info, "entry_points.txt"), "w") as f:
    for group, entries in groups.items():
        f.write(f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in entries.items()) + "\n")
print("linked", ", ".join(project["tool"]["setuptools"]["package-dir"]))
PY
}

# Every test file whose path names CUDA (tests/cuda/, tests/test_*cuda*.py, ...), plus the cuBLAS tests and the
# pinned-memory semantics; not the NVRTC compile test (CI runs it; it needs no GPU). The NCCL smoke test (a world of
# one process through init_process_group("nccl")) is run by tests/cuda/test_nccl.py.
cuda_tests() {
    local files
    mapfile -t files < <( (find tests -path '*cuda*' -name 'test_*.py' ! -name 'test_nvrtc_compile.py'; \
        echo tests/test_pinned_memory.py) | sort)
    if [ "${#files[@]}" -eq 0 ]; then
        echo "no CUDA test files found under tests/"
        return 1
    fi
    printf '%s\n' "${files[@]}"
    "$PYTHON" -m pytest -q -p no:cacheprovider -rs "${files[@]}"
}

# Every program the generator emits, compiled to cubins for this device's architecture into the kernel cache.
compile_cache() {
    local arch
    arch=$("$PYTHON" -c "import opweave as ow; major, minor = ow.cuda.get_device_capability(); print(major * 10 + minor)") \
        || return 1
    echo "sm_$arch"
    nice -n 10 "$PYTHON" scripts/cuda_compile_all.py --arch "$arch" --cache --jobs "${COMPILE_JOBS:-12}"
}

export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}" ROOT WHEELS PYTHON SITE
export LD_LIBRARY_PATH="$SITE/mpich-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export -f environment install unpack_mpich link_source_tree cuda_tests compile_cache
total_start=$SECONDS
step environment 15 environment
step install "${INSTALL_TIMEOUT:-35}" install
step compile "${COMPILE_TIMEOUT:-150}" compile_cache >"$LOGS/compile.summary" 2>&1 &
compile_pid=$!
step doctor "${DOCTOR_TIMEOUT:-25}" "$PYTHON" -m opweave.cli doctor
step tests "${TESTS_TIMEOUT:-100}" cuda_tests
wait "$compile_pid"
compile_status=$?
# A compile cut short by its limit leaves a partial cache (each cubin is stored as it is built): not a failure.
case $compile_status in 0 | 124 | 137) ;; *) failed=1 ;; esac
cat "$LOGS/compile.summary"
rm -f "$LOGS/compile.summary"
step bench "${BENCH_TIMEOUT:-90}" "$PYTHON" bench/cuda.py
step conformance "${CONFORMANCE_TIMEOUT:-170}" "$PYTHON" -m opweave.cli conformance --backend cuda --profile quick \
    --quiet --report "$LOGS/conformance.json"
echo "total $((SECONDS - total_start))s; logs in $LOGS" | tee -a "$SUMMARY"
exit "$failed"
