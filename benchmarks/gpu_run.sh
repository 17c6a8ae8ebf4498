#!/usr/bin/env bash
# One command on a lent GPU machine (no internet), from the checkout's root with the folder
# .gpu/ (made by benchmarks/gpu_prepare.sh) carried along; OUT = the folder that comes back:
#   bash benchmarks/gpu_run.sh
# 1. installs the carried wheels (.gpu/whl/*.whl: liac-arff, mlrl-boomer/-common/-util;
#    .gpu/whl/alt: numba-cuda 0.30.4 only if the image's is missing or older) into
#    $TMPD/site; gpurules itself runs from the checkout (PYTHONPATH, no install);
# 2. probes the stack into $OUT/env.txt (nvidia-smi, benchmarks/gpu_probe.py: versions,
#    driver and runtime, NVVM/NVRTC, SMs, compute capability, the smoke test of
#    device='auto', copy bandwidth);
# 3. benchmarks/gpu_diagnose.py --parts $DIAGNOSE_PARTS (default "ieee solve launch
#    histograms binning": IEEE results of gpurules-compiled kernels, the host cost of one
#    launch by launch path, the wide-feature histogram kernels at n = 1e6 against the copy
#    bandwidth, equal-width binning at n = 1e6 on the host and the device; "fma", the FMA
#    count of every kernel's PTX and SASS, 43 s of compiles, the same in 3 runs, is left
#    to follow-up calls): $OUT/diagnose.txt;
# 4. runs the gpu-marked tests (pytest -m gpu tests; 4 pytest-xdist workers when the image
#    has pytest-xdist: mostly CUDA compiles, which numba-cuda repeats in every process):
#    $OUT/pytest.txt;
# 5. gpu_diagnose.py --parts profile: cProfile of a 20-rule CUDA fit at n = 1e5 (PROFILE_N,
#    PROFILE_RULES; on the benchmarks' synthetic data): $OUT/profile.txt; then ncu's device
#    time of each kernel of the same fit: $OUT/kernels.txt;
# 6. benchmarks/compare_devices.py at n = 1e5 (30 rules; cuda-hist, cuda-single,
#    cuda-hist-inplace, cuda-hist-slot, cuda-hist-sorted, cuda-hist-255, mlrl-boomer
#    equal-width with both bin counts), 1e4 (100 rules) and 1e6 (10 rules; last, with the
#    most time; these two also with the bins made on the device: cuda-devbin,
#    cuda-sorted-devbin, cuda-devbin-255); their synthetic
#    data is made beside steps 2-5 (compare_devices.py --only-data: sklearn makes the
#    1.25e6 examples of n = 1e6 in 30 s to 3 minutes), and the last size waits for it;
# 7. compare_devices.py on yeast and scene (carried in .gpu/datasets): the
#    non-decomposable complete-head fit (cuda-nd, cuda-inplace-nd and cuda-sorted-nd
#    against boomer-nd, 200 rules), with cuda-nd's counted and profiled fits (its work per
#    refinement, its phases);
#    the reports of 6 and 7 one after the other in $OUT/devices.md, their logs in
#    $OUT/bench.txt.
# $OUT/steps.txt logs every step with its time and exit status. 8 files in all. Each step
# has its own time limit within BUDGET (560 s: a session's 15 minutes of device time hold
# the machine's start, about 60 s, this call and a short second one), so a slow step still
# leaves the results of the earlier ones. The exit status is the number of steps that failed.
#
# GPU_RUN_DRY=1 exercises the script on a machine without a GPU: nothing is installed (PY's
# own packages are used), the benchmarks use n = 2e3 and 4e3 with 20 rules, BUDGET = 420 s.
# Other settings: PY (python3), TMPD (/tmp: site, Numba cache), BUDGET, STEPS (which of
# "probe diagnose tests profile kernels bench datasets" run; default all; ncu is skipped
# where the machine has none), GPU_SIZES and GPU_RULES
# (the benchmark sizes and their rules, "1e5 1e4 1e6" and "30 100 10"), GPU_DATA_RULES
# (200) and DATA_SYSTEMS ("cuda-nd cuda-inplace-nd cuda-sorted-nd boomer-nd") of step 7,
# DATA_DIR (.gpu/datasets), SYSTEMS (of the first size; "cuda-hist cuda-single
# cuda-hist-inplace cuda-hist-slot cuda-hist-sorted cuda-hist-255 boomer-ew boomer-ew-255")
# and LARGE_SYSTEMS (of the others;
# the same without cuda-single, whose worth sessions 49 and 50 measured at every size, and
# with "cuda-devbin cuda-sorted-devbin cuda-devbin-255"),
# TEST_WORKERS (4). On
# 2026-11-28 (H200, cold caches) the tests in one process needed more than their 132 s;
# 100 rules of mlrl-boomer at n = 1e5 took 52 s on 16 cores. A short follow-up call on the
# warm machine (one size: its profiled fit is not skipped), for example:
#   STEPS=bench GPU_SIZES=1e6 GPU_RULES=20 SYSTEMS="cuda-hist cuda-numba" BUDGET=240 \
#       bash benchmarks/gpu_run.sh
# or where the host's time goes in a fit at n = 1e6 (session 50: 1.6 s of 4.3 s binning;
# PROFILE_SYSTEM: compare_devices' system of the fit, default cuda-hist):
#   STEPS="profile" PROFILE_N=1e6 PROFILE_RULES=10 PROFILE_SYSTEM=cuda-sorted-devbin \
#       BUDGET=120 bash benchmarks/gpu_run.sh
# and in a non-decomposable fit of a data set (with the environment gpu_run.sh sets up):
#   python3 benchmarks/gpu_diagnose.py --parts profile --dataset yeast --system cuda-nd \
#       --rules 200
# or which kernels its steps spend their device time in (KERNELS_FIT: more arguments of the
# fit that ncu watches; yeast: about 4,900 steps of about 9 launches):
#   STEPS=kernels KERNELS_FIT="--dataset yeast --system cuda-nd --rules 200" BUDGET=120 \
#       bash benchmarks/gpu_run.sh
set -u
cd "$(dirname "$0")/.." || exit 99
: "${OUT:?set OUT to the folder for the results}"
mkdir -p "$OUT"
DRY=${GPU_RUN_DRY:-0}
PY=${PY:-python3}
TMPD=${TMPD:-/tmp}
SYSTEMS=${SYSTEMS:-cuda-hist cuda-single cuda-hist-inplace cuda-hist-slot cuda-hist-sorted \
    cuda-hist-255 boomer-ew boomer-ew-255}
LARGE_SYSTEMS=${LARGE_SYSTEMS:-cuda-hist cuda-hist-inplace cuda-hist-slot cuda-hist-sorted \
    cuda-devbin cuda-sorted-devbin cuda-hist-255 cuda-devbin-255 boomer-ew boomer-ew-255}
DATA_SYSTEMS=${DATA_SYSTEMS:-cuda-nd cuda-inplace-nd cuda-sorted-nd boomer-nd}
DATA_DIR=${DATA_DIR:-.gpu/datasets}
TEST_WORKERS=${TEST_WORKERS:-4}
STEPS=" ${STEPS:-probe diagnose tests profile kernels bench datasets} "
# seconds the tests leave to the steps after them, and the first benchmark to the second
if [ "$DRY" = 1 ]; then
    BUDGET=${BUDGET:-420}; TESTS_KEEP=150; BENCH_KEEP=50; TAIL_KEEP=30; DATA_KEEP=30
    read -r -a SIZES <<< "${GPU_SIZES:-2e3 4e3}"; read -r -a RULES <<< "${GPU_RULES:-20 20}"
    DATA_RULES=${GPU_DATA_RULES:-10}
else
    BUDGET=${BUDGET:-560}; TESTS_KEEP=330; BENCH_KEEP=220; TAIL_KEEP=130; DATA_KEEP=60
    read -r -a SIZES <<< "${GPU_SIZES:-1e5 1e4 1e6}"
    read -r -a RULES <<< "${GPU_RULES:-30 100 10}"
    DATA_RULES=${GPU_DATA_RULES:-200}
fi
[ "${#SIZES[@]}" = "${#RULES[@]}" ] || { echo "GPU_SIZES and GPU_RULES differ in length" >&2; exit 99; }
want() { [[ "$STEPS" == *" $1 "* ]]; }
WHL=.gpu/whl
T0=$(date +%s)
FAILED=0
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
# the time limit of a step that leaves $1 s for the steps after it (at least 20 s)
lim() { local x=$(( $(left) - $1 )); [ "$x" -lt 20 ] && x=20; echo "$x"; }
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/steps.txt"; }
# "step NAME RC": log the exit status of a step (124, 137: its time limit); count failures
step() {
    local why=""
    case "$2" in 124 | 137) why=" (time limit)" ;; esac
    [ "$2" = 0 ] || FAILED=$((FAILED + 1))
    log "$1: rc=$2$why"
}

install_wheels() {
    if [ "$DRY" = 1 ]; then log "dry run: no wheels installed, using $PY as it is"; return 0; fi
    if ! ls "$WHL"/*.whl > /dev/null 2>&1; then
        log "no wheels in $WHL: run benchmarks/gpu_prepare.sh and carry .gpu"; return 1
    fi
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$TMPD/site" "$WHL"/*.whl || return 1
    if $PY -c "import numba_cuda, sys; sys.exit(tuple(map(int, \
            numba_cuda.__version__.split('.')[:2])) < (0, 30))" 2> /dev/null; then
        return 0
    fi
    log "the image's numba-cuda is missing or older than 0.30: installing $WHL/alt"
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$TMPD/site" "$WHL"/alt/*.whl || return 1
    # a --target folder on PYTHONPATH is no site folder: run its .pth files (numba-cuda's
    # redirector of numba.cuda) from a sitecustomize there
    printf '%s\n' "import os, site" \
        "site.addsitedir(os.path.dirname(os.path.abspath(__file__)))" \
        > "$TMPD/site/sitecustomize.py"
}

log "gpu_run.sh: $(git log -1 --format='%h %s' 2>/dev/null | cut -c1-80); budget ${BUDGET} s"
install_wheels; step "install wheels" $?
export PYTHONPATH="$TMPD/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export NUMBA_CACHE_DIR="$TMPD/nbcache" OMP_WAIT_POLICY=passive PYTHONUNBUFFERED=1
# numba-cuda finds libNVVM through CUDA_HOME when no nvidia-nvvm wheel is installed
if [ -z "${CUDA_HOME:-}" ] && [ -d /usr/local/cuda/nvvm ]; then export CUDA_HOME=/usr/local/cuda; fi

# the benchmarks' synthetic data made beside the first steps, in order of size (sklearn makes
# the examples one at a time: the 1.25e6 of n = 1e6 take 30 s to 3 minutes on one core);
# each benchmark loads its data from there, or makes it itself if it is not there yet
DATA_CACHE="$TMPD/gpurules-data"
DATA_PID=""
if want bench; then
    # shellcheck disable=SC2086  # a list of sizes
    nice -n 5 $PY benchmarks/compare_devices.py --sizes ${SIZES[*]} --datasets --only-data \
        --data-cache "$DATA_CACHE" > "$TMPD/gpurules-data.log" 2>&1 &
    DATA_PID=$!
fi

if want probe; then
    log "probe"
    {
        date -u
        nvidia-smi 2>&1 | head -20 || echo "nvidia-smi: not available"
        timeout -k 10 150 $PY benchmarks/gpu_probe.py
        echo "gpu_probe.py rc=$?"
    } > "$OUT/env.txt" 2>&1
    grep -q "gpu_probe.py rc=0" "$OUT/env.txt"; step "probe" $?
    grep -E "^FAILED|^cuda_status" "$OUT/env.txt" | cut -c1-300 | tee -a "$OUT/steps.txt"
fi

if want diagnose; then
    log "diagnose"
    # shellcheck disable=SC2086  # a list of parts
    timeout -k 10 180 $PY benchmarks/gpu_diagnose.py \
        --parts ${DIAGNOSE_PARTS:-ieee solve launch histograms binning} \
        > "$OUT/diagnose.txt" 2>&1
    step "diagnose" $?
    grep -c "^FAILED" "$OUT/diagnose.txt" | sed 's/^/diagnose: FAILED parts: /' \
        | tee -a "$OUT/steps.txt"
fi

if want tests; then
    log "gpu tests"
    workers=()
    if [ "$TEST_WORKERS" -gt 1 ] && $PY -c "import xdist" 2> /dev/null; then
        workers=(-n "$TEST_WORKERS")
    fi
    timeout -k 10 "$(lim $TESTS_KEEP)" $PY -m pytest -m gpu -v -rs -p no:cacheprovider \
        "${workers[@]}" --durations=15 tests > "$OUT/pytest.txt" 2>&1
    step "gpu tests" $?
    tail -1 "$OUT/pytest.txt" | tee -a "$OUT/steps.txt"
fi

if ! want profile; then
    :
elif [ "$DRY" = 1 ]; then
    log "profile: skipped in a dry run (n = 1e5 on the CPU)"
else
    log "profile"
    timeout -k 10 "$(lim 240)" $PY benchmarks/gpu_diagnose.py --parts profile \
        --n "${PROFILE_N:-1e5}" --rules "${PROFILE_RULES:-20}" --data-cache "$DATA_CACHE" \
        --system "${PROFILE_SYSTEM:-cuda-hist}" \
        > "$OUT/profile.txt" 2>&1
    step "profile" $?
fi

# the device time of every kernel of a search step, from ncu on the 20-rule fit of
# gpu_diagnose.py --parts fit (or the fit that KERNELS_FIT's arguments name), past the warm-up
# fit and the first launches of the timed one
# (--launch-skip), without locking the clocks (docs/gpu-validation.md: METHOD.md's advice);
# at most 60 s (24 s on the H200 of 2026-11-30, warm caches)
if want kernels && ! command -v ncu > /dev/null; then
    log "kernels: skipped (no ncu on this machine)"
elif want kernels; then
    log "kernels (ncu)"
    k=$(lim 240); [ "$k" -gt 60 ] && k=60
    # shellcheck disable=SC2086  # KERNELS_FIT: a list of arguments
    timeout -k 10 "$k" ncu --clock-control none --metrics gpu__time_duration.sum \
        --launch-skip "${NCU_SKIP:-5000}" --launch-count "${NCU_COUNT:-700}" \
        --print-summary per-kernel $PY benchmarks/gpu_diagnose.py --parts fit \
        --data-cache "$DATA_CACHE" ${KERNELS_FIT:-} \
        > "$OUT/kernels.txt" 2>&1
    step "kernels" $?
fi

# each compare_devices report appended to $OUT/devices.md under a heading (one file for all)
report() {
    { echo "# $1"; echo; cat "$TMPD/devices-part.md" 2> /dev/null || echo "(no report)"; echo; } \
        >> "$OUT/devices.md"
    rm -f "$TMPD/devices-part.md"
}
rm -f "$TMPD/devices-part.md"
{ want bench || want datasets; } && : > "$OUT/bench.txt"
for i in "${!SIZES[@]}"; do
    want bench || break
    n=${SIZES[$i]}
    systems=$SYSTEMS
    extra=""
    [ "$i" -gt 0 ] && systems=$LARGE_SYSTEMS && extra="--skip-profile"
    # the time left to the later steps: the first size's larger, the last size's for step 7
    keep=$(( i == 0 ? BENCH_KEEP : TAIL_KEEP ))
    if [ "$i" -eq $(( ${#SIZES[@]} - 1 )) ]; then
        keep=5; want datasets && keep=$DATA_KEEP
    fi
    # the largest size: wait for its data while it is being made (making it again here
    # would take as long), leaving the step at least 60 s
    if [ "$i" -eq $(( ${#SIZES[@]} - 1 )) ] && [ -n "$DATA_PID" ]; then
        while kill -0 "$DATA_PID" 2> /dev/null && [ "$(left)" -gt $(( keep + 60 )) ]; do
            sleep 1
        done
        if kill -0 "$DATA_PID" 2> /dev/null; then
            log "synthetic data: still being made (the benchmark makes its own)"
        else
            log "synthetic data: $(tail -1 "$TMPD/gpurules-data.log" | cut -c1-150)"
        fi
    fi
    log "compare_devices n=$n, ${RULES[$i]} rules, $systems ($(left) s left)"
    # shellcheck disable=SC2086  # systems is a list
    timeout -k 10 "$(lim $keep)" $PY benchmarks/compare_devices.py --sizes "$n" --datasets \
        --systems $systems --repeats 1 --skip-cold --max-rules "${RULES[$i]}" $extra \
        --data-cache "$DATA_CACHE" \
        --output "$TMPD/devices-part.md" >> "$OUT/bench.txt" 2>&1
    step "compare_devices n=$n" $?
    report "n = $n, ${RULES[$i]} rules"
done
if want datasets; then
    log "compare_devices yeast scene, $DATA_RULES rules, $DATA_SYSTEMS ($(left) s left)"
    timeout -k 10 "$(lim 5)" $PY benchmarks/compare_devices.py --sizes --datasets yeast scene \
        --systems $DATA_SYSTEMS --repeats 1 --skip-cold --data-dir "$DATA_DIR" \
        --max-rules "$DATA_RULES" --output "$TMPD/devices-part.md" >> "$OUT/bench.txt" 2>&1
    step "compare_devices yeast scene" $?
    report "yeast and scene, $DATA_RULES rules"
fi
[ -n "$DATA_PID" ] && kill "$DATA_PID" 2> /dev/null
log "done: $FAILED step(s) failed; files: $(ls "$OUT" | tr '\n' ' ')"
exit "$FAILED"
