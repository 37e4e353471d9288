#!/usr/bin/env bash
# Packs what the GPU machine needs for utils/gpu/gpu-check.sh into .gpu.tgz (at
# most 64 MiB travels to it; its image has no Debian LLVM, ONNX, protobuf or
# OpenBLAS, so they go along): oomplan, oomplan-run and the CUDA kernel
# tests, stripped; the shared libraries they load except the C library and
# the CUDA libraries (the GPU machine has its own cudart, cuBLAS and cuDNN,
# in the toolkit or in PyTorch's nvidia-* packages); the ONNX node tests
# whose every op has a CUDA kernel; and, where this machine has Debian's
# PyTorch, the exports of utils/check/check_unseen_runtime.py whose every op has
# one, or a CPU kernel for a host step (gpu-check's section 5).
#
#   utils/gpu/gpu-bundle.sh            # builds BUILD_DIR (default build) first
# Then, on the GPU machine with .gpu.tgz in the repository root: bash utils/gpu/gpu-check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
if ! grep -q '^OOMPLAN_ENABLE_CUDA:BOOL=ON' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DOOMPLAN_ENABLE_CUDA=ON \
    -DOOMPLAN_UNIT_TESTS=ON >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" --target oomplan oomplan-run RuntimeCUDATests
rm -rf .gpu .gpu.tgz
mkdir -p .gpu/bin .gpu/lib .gpu/node
for b in tools/oomplan/oomplan tools/oomplan-run/oomplan-run \
         test/unit/Runtime/CUDA/RuntimeCUDATests; do
  cp "$BUILD_DIR/$b" .gpu/bin/
done
strip .gpu/bin/*
# Shared libraries: everything ldd resolves but glibc's own and CUDA's.
for b in .gpu/bin/*; do ldd "$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so|/lib(cudart|cublas|cublasLt|cudnn[a-z_]*)\.so' |
  while read -r lib; do cp -L "$lib" .gpu/lib/; done
# The node tests the CUDA table can run (ops read from each model).
/usr/bin/python3 - <<'PY'
import glob, os, shutil, subprocess, onnx
ops = set(subprocess.run([".gpu/bin/oomplan-run", "--list-kernels", "--backend=cuda"],
                         capture_output=True, text=True,
                         env=dict(os.environ, LD_LIBRARY_PATH=".gpu/lib")).stdout.split())
ops.add("Constant")  # loaded with the weights: no kernel
if "OomplanIf" in ops:
    ops.add("If")  # flattened into guarded nodes and an OomplanIf
def nodes(g):  # every node, those of If branches included
    for n in g.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from nodes(a.g)
kept = 0
for d in sorted(glob.glob("/usr/share/libonnx-testdata/data/node/*")):
    try:
        m = onnx.load(os.path.join(d, "model.onnx"))
    except Exception:
        continue
    used = {n.op_type for n in nodes(m.graph)}
    if used and used <= ops and all(n.domain in ("", "ai.onnx") for n in nodes(m.graph)):
        shutil.copytree(d, os.path.join(".gpu/node", os.path.basename(d)))
        kept += 1
print(f"gpu-bundle: {kept} node tests use only ops with CUDA kernels ({len(ops)} ops)")
PY
# Exports oomplan was not developed on, whose every op has a CUDA kernel or
# runs as a host step (a CPU kernel).
# Up to 2 MB a model travels whole, with PyTorch 1.13's outputs as the
# reference; a larger one without its weights (external data left behind,
# as test/models), and gpu-check runs it with --random-weights on both
# backends and compares the two. Skipped without python3-torch.
if /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
  exp=$(mktemp -d /tmp/oomplan-unseen.XXXXXX)
  /usr/bin/python3 utils/check/check_unseen_runtime.py "$exp" --export-only >"$exp.log" 2>&1 ||
    { tail -n 5 "$exp.log"; echo "gpu-bundle: exporting the unseen models failed" >&2; exit 1; }
  /usr/bin/python3 - "$exp" <<'PY'
import glob, os, shutil, subprocess, sys, onnx
exp = sys.argv[1]
def table(backend):
    return set(subprocess.run([".gpu/bin/oomplan-run", "--list-kernels", "--backend=" + backend],
                              capture_output=True, text=True,
                              env=dict(os.environ, LD_LIBRARY_PATH=".gpu/lib")).stdout.split())
ops = table("cuda")
# Ops CUDA lacks run as host steps (docs/cuda.md) where the CPU has them;
# Loop, Scan and the sequence ops are unrolled when importing.
ops |= table("cpu") | {"Loop", "Scan", "SequenceConstruct", "SequenceEmpty", "SequenceInsert",
                       "SequenceErase", "SequenceAt", "SequenceLength", "ConcatFromSequence",
                       "SplitToSequence"}
ops |= {"Constant", "If"} if "OomplanIf" in ops else {"Constant"}
def nodes(g):
    for n in g.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from nodes(a.g)
kept, lines = [], []
for d in sorted(glob.glob(os.path.join(exp, "*"))):
    name, mp = os.path.basename(d), os.path.join(d, "model.onnx")
    m = onnx.load(mp)
    if not {n.op_type for n in nodes(m.graph)} <= ops:
        continue
    to = os.path.join(".gpu/unseen", name)
    shutil.copytree(os.path.join(d, "in"), os.path.join(to, "in"))
    if os.path.getsize(mp) <= 2 << 20:
        shutil.copy(mp, to)
        shutil.copytree(os.path.join(d, "ref"), os.path.join(to, "ref"))
        lines.append(f"{name} ref")
    else:
        # Large initializers point at a file that does not travel; small
        # ones (shapes, axes, scales) keep their values, which the graph's
        # meaning depends on.
        for t in m.graph.initializer:
            n = 1
            for x in t.dims:
                n *= x
            if n > 64:
                t.ClearField("raw_data")
                for f in ("float_data", "int32_data", "int64_data", "double_data"):
                    t.ClearField(f)
                t.data_location = onnx.TensorProto.EXTERNAL
                del t.external_data[:]
                e = t.external_data.add()
                e.key, e.value = "location", name + ".stripped.bin"
        onnx.save(m, os.path.join(to, "model.onnx"))
        lines.append(f"{name} cpu")
    kept.append(name)
if lines:
    open(".gpu/unseen/list.txt", "w").write("\n".join(lines) + "\n")
print(f"gpu-bundle: {len(kept)} unseen exports, every op on CUDA or in a host step: {' '.join(kept)}")
PY
  rm -rf "$exp" "$exp.log"
fi
# float16 and bfloat16 versions of two test models (weightless as they
# are: external data left behind), for gpu-check's section 5b.
mkdir -p .gpu/half
for m in resnet50 bert_like; do
  /usr/bin/python3 utils/export/to_float16.py "test/models/$m.onnx" ".gpu/half/${m}_f16.onnx"
  /usr/bin/python3 utils/export/to_float16.py "test/models/$m.onnx" ".gpu/half/${m}_bf16.onnx" --bfloat16
done
# Quantized versions of two test models (weightless as well), for section
# 5c: QLinearConv (QOperator) and DynamicQuantizeLinear + MatMulInteger.
mkdir -p .gpu/quant
/usr/bin/python3 utils/export/to_quantized.py test/models/resnet50.onnx .gpu/quant/resnet50_qop.onnx --qoperator
/usr/bin/python3 utils/export/to_quantized.py test/models/bert_like.onnx .gpu/quant/bert_like_dynq.onnx --dynamic
# The opset 23 to 25 function-op models with their inputs, for section 5d.
/usr/bin/python3 utils/check/check_function_ops.py .gpu/fnops --write-only
# And ONNX Runtime's contrib ops (MatMulNBits, GroupQueryAttention, ...).
/usr/bin/python3 utils/check/check_contrib_ops.py .gpu/fnops --write-only
# And the ops of opsets 18 to 22 (Pad's modes, GroupNormalization, Col2Im,
# DeformConv, ...; a directory of their own: names repeat), less those the
# CPU executor refuses (the script's expected errors).
/usr/bin/python3 utils/check/check_new_opsets.py .gpu/newops --write-only
for u in .gpu/newops/*/; do
  "$BUILD_DIR/tools/oomplan-run/oomplan-run" "$u/model.onnx" --inputs-dir "$u/in" \
    >/dev/null 2>&1 || rm -rf "$u"
done
# An int4 LLM in the GenAI builder's layout, weights stripped (gpu-check
# runs it with --random-weights), with the token ids and masks of a decode
# step and a prompt (the caches are random), for section 5e.
mkdir -p .gpu/llm
for c in dec:1:1023 pre:256:0; do
  IFS=: read -r tag s p <<<"$c"
  /usr/bin/python3 test/lit/frontend/Inputs/genai_llm.py .gpu/llm/llm.onnx --external \
    --layers 4 --hidden 2048 --heads 16 --kv-heads 4 --inter 5632 --vocab 32000 \
    --max-len 2048 --inputs ".gpu/llm/$tag" --batch 1 --seq "$s" --past "$p"
  rm -f ".gpu/llm/$tag"/input_[2-9].pb
done
tar -czf .gpu.tgz .gpu
rm -rf .gpu
size=$(stat -c %s .gpu.tgz)
echo "gpu-bundle: .gpu.tgz $((size / 1048576)) MiB (the run's limit is 64 MiB with the tree)"
