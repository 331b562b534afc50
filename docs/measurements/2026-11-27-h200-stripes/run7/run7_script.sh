#!/bin/bash
exec > >(tee "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --target /tmp/site .device_kit/wheels/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD SINGE_CACHE=$PWD/.device_kit/cache
mkdir -p ../shared && cp -r .device_kit/shared/mechanisms ../shared/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== $(date +%T) timing: viscosity at the paper's settings, balanced Wilke groups"
timeout 60 python3 -m autotune.gpu_bench --mechanisms dme,heptane --kernels viscosity --settings paper --arch sm_90 --points 2097152 --no-sanitizer --json "$OUT/paper.json" --plot ''
echo "== $(date +%T) DME viscosity at 10 x 4 (groups of 3), both styles"
timeout 40 python3 -m autotune.gpu_bench --settings '' --arch sm_90 --sweep-best .device_kit/v7/dv_10x4.txt --points 2097152 --no-sanitizer --json "$OUT/dme_10x4.json" --plot ''
echo "== $(date +%T) done"
