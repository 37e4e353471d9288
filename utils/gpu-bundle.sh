#!/usr/bin/env bash
# Packs what the GPU machine needs for utils/gpu-check.sh into .gpu.tgz (at
# most 64 MiB travels to it; its image has no Debian LLVM, ONNX, protobuf or
# OpenBLAS, so they go along): oomplan, oomplan-run and the CUDA kernel
# tests, stripped; the shared libraries they load except the C library and
# the CUDA libraries (the GPU machine has its own cudart, cuBLAS and cuDNN,
# in the toolkit or in PyTorch's nvidia-* packages); and the ONNX node tests
# whose every op has a CUDA kernel.
#
#   utils/gpu-bundle.sh            # builds BUILD_DIR (default build) first
# Then, with a GPU lent: run(command="bash utils/gpu-check.sh", carry=[".gpu.tgz"])
set -euo pipefail
cd "$(dirname "$0")/.."
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
         test/unit/RuntimeCUDA/RuntimeCUDATests; do
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
tar -czf .gpu.tgz .gpu
rm -rf .gpu
size=$(stat -c %s .gpu.tgz)
echo "gpu-bundle: .gpu.tgz $((size / 1048576)) MiB (the run's limit is 64 MiB with the tree)"
