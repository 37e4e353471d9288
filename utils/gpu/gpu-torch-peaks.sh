#!/bin/sh
# Measures PyTorch's memory for training steps (utils/gpu/gpu_torch_peaks.py says how): the four shared
# models, one small member of every torchvision classification family, GPT-2, Llama, BERT and T5
# from transformers configs (each with eager and sdpa attention), an LSTM language model and a
# Conformer-like encoder, all with random weights (nothing is downloaded). Per case:
# torch.cuda.max_memory_allocated and max_memory_reserved for the first and a steady step, fp32 Adam
# and bf16 autocast; for resnet50, gpt_like and GPT-2 the largest batch that trains under a 24 GiB
# memory fraction. Each model is exported to ONNX (training mode, graph-only; the dynamo exporter in
# eval mode where the TorchScript one fails on a transformers model). --deadline-seconds (default
# 450) bounds the run: cases that would pass it are recorded as skipped. Without a GPU it measures
# live tensor bytes on the CPU instead, so it runs anywhere; what needs CUDA or transformers is
# recorded as skipped.
#
#   utils/gpu/gpu-torch-peaks.sh [OUTDIR] [extra gpu_torch_peaks.py options, e.g. --small --only resnet18]
#   OOMPLAN=build/tools/oomplan/oomplan utils/gpu/gpu-torch-peaks.sh OUTDIR   # then compare, if it exists
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
