#!/usr/bin/env bash
# Installs oomplan's build and test dependencies from Debian 12 packages.
# Skips `apt-get update` when everything is already installed, so a warm
# machine starts fast. Run as root.
set -euo pipefail
PKGS=(cmake ninja-build g++ libonnx-dev libprotobuf-dev protobuf-compiler
      llvm-14-dev llvm-14-tools libgtest-dev libonnx-testdata python3-onnx
      clang-format clang-14 libclang-rt-14-dev
      libopenblas-dev pybind11-dev python3-pybind11 python3-dev python3-pytest
      pkg-config)
if dpkg -s "${PKGS[@]}" >/dev/null 2>&1; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${PKGS[@]}" >/dev/null
