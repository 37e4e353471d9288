#!/bin/sh
# Measures PyTorch's memory for one steady-state training step of the four shared models, four
# torchvision models, a GPT-2 and a Llama (random weights from configs; nothing is downloaded):
# torch.cuda.max_memory_allocated and max_memory_reserved, fp32 Adam and bf16 autocast, and exports
# each model to ONNX in training mode, graph-only (utils/gpu_torch_peaks.py says how). Without a GPU
# it measures live tensor bytes on the CPU instead, so it runs anywhere; without transformers the
# GPT-2 and Llama cases are skipped.
#
#   utils/gpu-torch-peaks.sh [OUTDIR] [extra gpu_torch_peaks.py options, e.g. --small --only resnet18]
#   OOMPLAN=build/tools/oomplan/oomplan utils/gpu-torch-peaks.sh OUTDIR   # then compare, if it exists
#
# OUTDIR defaults to $OUT/gpu-peaks when $OUT is set (the device machine), else ./gpu-peaks.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${OUT:+$OUT/}gpu-peaks}
[ $# -gt 0 ] && shift
py=python3
# Debian's interpreter has torch on this machine; the GPU image's python3 has its own.
if ! python3 -c 'import torch' 2>/dev/null && [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; fi
$py -c 'import torch, sys; print("torch", torch.__version__, "cuda" if torch.cuda.is_available() else "cpu", file=sys.stderr)'
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || true
status=0
$py "$here/gpu_torch_peaks.py" --out "$out" "$@" || status=$?
oomplan=${OOMPLAN:-}
if [ -n "$oomplan" ] && [ -x "$oomplan" ]; then
  $py "$here/gpu_torch_peaks.py" --compare "$out" --oomplan "$oomplan" || status=$?
fi
exit $status
