#!/usr/bin/env bash
# Prepares .gpu/whl for benchmarks/gpu_run.sh, on a machine with a package registry:
#   bash benchmarks/gpu_prepare.sh          (from anywhere; writes <checkout>/.gpu/whl)
# The GPU machine has no internet. Its image has Python 3.12 with numpy, scipy,
# scikit-learn, numba, numba-cuda, cupy-cuda13x, pandas, pytest and hypothesis
# (/work/.library/device/KINDS.md); it lacks liac-arff and mlrl-boomer, so these are carried:
#   .gpu/whl/      liac-arff (built here: PyPI has only its sdist), mlrl-boomer, mlrl-common,
#                  mlrl-util 0.15.6 (installed with --no-deps: their numpy/scipy/sklearn
#                  pins are older than the image's, and they work with the newer ones)
#   .gpu/whl/alt/  numba-cuda 0.30.4 with cuda-core and cuda-pathfinder, installed only if
#                  the image's numba-cuda is missing or older than 0.30
#   .gpu/datasets/ yeast and scene (train/test ARFF and label XML, 8.6 MB) from DATASETS
#                  (default <checkout>/../shared/datasets): the GPU machine gets the checkout
#                  and .gpu only, and gpu_run.sh's last step fits these two
# .gpu/ is ignored by git (.gitignore); pass it to the run tool as carry: [".gpu"].
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
W=.gpu/whl
rm -rf "$W" && mkdir -p "$W/alt"
P=(--no-deps --only-binary=:all: --python-version 3.12 --implementation cp
   --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
   --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64
   --platform manylinux2014_x86_64)
$PY -m pip download -q "${P[@]}" -d "$W" \
    mlrl-boomer==0.15.6 mlrl-common==0.15.6 mlrl-util==0.15.6
$PY -m pip download -q "${P[@]}" -d "$W/alt" \
    numba-cuda==0.30.4 cuda-core==1.2.2 cuda-pathfinder==1.9.0
SDIST=$(mktemp -d)
trap 'rm -rf "$SDIST"' EXIT
$PY -m pip download -q --no-deps --no-binary=:all: -d "$SDIST" liac-arff==2.5.0
$PY -m pip wheel -q --no-deps -w "$W" "$SDIST"/liac*arff-2.5.0.tar.gz
DATASETS=${DATASETS:-../shared/datasets}
rm -rf .gpu/datasets && mkdir -p .gpu/datasets
for name in yeast scene; do
    cp "$DATASETS/$name-train.arff" "$DATASETS/$name-test.arff" "$DATASETS/$name.xml" \
        .gpu/datasets/
done
ls -l "$W" "$W/alt" .gpu/datasets
SIZE=$(du -sm .gpu | cut -f1)
echo ".gpu holds ${SIZE} MiB (the run tool carries at most 64 MiB)"
[ "$SIZE" -lt 48 ] || { echo "error: .gpu is too large to carry" >&2; exit 1; }
