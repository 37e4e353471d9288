//===- DeviceProfile.h - what a GPU can do, for the cost model --*- C++ -*-===//
//
// The numbers the roofline cost model needs about one accelerator: dense peak
// FLOP/s per precision, device-memory bandwidth, host-link bandwidth (one
// direction) and memory size (the default budget). A table of common NVIDIA
// GPUs is built in (vendor datasheet numbers; docs/fitting.md cites them); any
// other device is a small JSON file with the same fields.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_COST_DEVICEPROFILE_H
#define OOMPLAN_COST_DEVICEPROFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <cstdint>
#include <string>

namespace oomplan {

struct DeviceProfile {
  std::string Name;
  /// Dense (no sparsity) peak arithmetic, FLOP/s.
  double PeakFP32 = 0;
  double PeakTF32 = 0; ///< Tensor cores on fp32 data (opt-in in PyTorch).
  double PeakFP16 = 0;
  double PeakBF16 = 0;
  /// Device-memory bandwidth, bytes/s.
  double MemBandwidth = 0;
  /// Host link, one direction, bytes/s (PCIe x16: half the datasheet's
  /// bidirectional figure).
  double HostLinkBandwidth = 0;
  /// Device memory, bytes, as the card is sold (80 GiB for an
  /// "80GB" card): the default budget.
  uint64_t MemoryBytes = 0;
  /// Host memory bandwidth, bytes/s: what an optimizer step on the host
  /// runs at (JSON "host_mem_bandwidth_gbps"; the default is a typical
  /// server socket's, since datasheets of GPUs do not say).
  double HostMemBandwidth = 100e9;
  /// What kernels reach on this device, measured rather than datasheet:
  /// the fraction of the peak FLOP/s a product runs at, of the memory
  /// bandwidth a memory-bound kernel moves, and the shortest time a kernel
  /// step takes (launch gap and ramp-up: a step on a few bytes still costs
  /// this). 1, 1 and 0 (the pure roofline) unless a profile measured them
  /// (JSON "compute_efficiency", "memory_efficiency", "kernel_us").
  double ComputeEfficiency = 1;
  double MemoryEfficiency = 1;
  double KernelSeconds = 0;
  /// The fraction of the FP32 peak a step reaches when it computes on the
  /// FP32 (non-tensor-core) units: fp32 products without TF32, and every
  /// step of a device whose other peaks are its FP32 one. A measured bf16
  /// tensor-core product says little about an FP32 one (JSON
  /// "fp32_efficiency"; compute_efficiency unless given).
  double FP32Efficiency = 1;
  /// What a CUDA process takes on this device beyond its allocations: the
  /// context and the library handles, as measured (docs/gpu-results.md).
  /// The default --overhead when --device names this profile (JSON
  /// "overhead_mib"; 0, none assumed, unless measured).
  uint64_t OverheadBytes = 0;
  /// What a convolution reaches against a product of the same FLOPs and
  /// bytes: a convolution step takes its roofline time (the efficiencies
  /// above applied) divided by this. cuDNN's kernels walk windows a GEMM
  /// does not; a grouped convolution (group > 1: depthwise, ResNeXt's)
  /// has its own, as its kernels are others again. Both 1 unless measured
  /// (JSON "conv_efficiency", "grouped_conv_efficiency";
  /// utils/gpu/calibration).
  double ConvEfficiency = 1;
  double GroupedConvEfficiency = 1;
  /// The same for the fused attention kernel (OomplanAttention, oomplan's
  /// own online-softmax kernels) against a product of its FLOPs and bytes
  /// (JSON "attention_efficiency"; 1 unless measured).
  double AttentionEfficiency = 1;
  /// PyTorch eager's memory efficiency and kernel floor, where the ones
  /// above are oomplan-run's own kernels replayed in a CUDA graph (the H200
  /// row): what a training plan, which PyTorch runs, is priced at
  /// (eagerProfile). Products and convolutions are cuBLAS's and cuDNN's in
  /// both. 0 and a negative floor: unset, the ones above (JSON
  /// "eager_memory_efficiency", "eager_kernel_us").
  double EagerMemoryEfficiency = 0;
  double EagerKernelSeconds = -1;
  /// cuBLAS's workspace per handle and stream as PyTorch sizes it: 32 MiB
  /// on compute capability 9 and later, 8 MiB + 128 KiB before (JSON
  /// "cublas_workspace_mib"; report/CudaLibraries.h).
  uint64_t CublasWorkspaceBytes = 32ull << 20;
};

/// P as PyTorch eager runs on it: its eager memory efficiency and kernel
/// floor in place of MemoryEfficiency and KernelSeconds where it has them,
/// and no eager values left (the result is the profile a plan is costed
/// against). Unchanged when it has none.
DeviceProfile eagerProfile(DeviceProfile P);

/// The built-in profiles, in a fixed order.
llvm::ArrayRef<DeviceProfile> deviceProfiles();

/// The built-in profile called Name (case-insensitive; "h100" is "H100-SXM").
llvm::Expected<DeviceProfile> findDevice(llvm::StringRef Name);

/// A profile from JSON text: {"name": "...", "peak_fp32_tflops": 19.5,
/// "peak_tf32_tflops": ..., "peak_fp16_tflops": ..., "peak_bf16_tflops": ...,
/// "mem_bandwidth_gbps": 1555, "host_link_gbps": 32, "memory_gib": 40}.
/// Rates are decimal (1 TFLOPS = 1e12 FLOP/s, 1 GB/s = 1e9 bytes/s); memory
/// is binary, as GPU memory is quoted (40 = 40 GiB; the older key
/// "memory_gb" reads the same way). Missing precisions default to the fp32
/// peak. Path is for error messages.
llvm::Expected<DeviceProfile> parseDeviceJSON(llvm::StringRef Text,
                                              llvm::StringRef Path);

/// A built-in name, or a path ending in ".json".
llvm::Expected<DeviceProfile> loadDevice(llvm::StringRef NameOrPath);

/// P's fields as the JSON object parseDeviceJSON reads (every key written; the
/// eager ones where set), so that a plan says what it was costed against and a
/// measured profile can start from a built-in one.
void writeDeviceJSON(llvm::json::OStream &J, const DeviceProfile &P);

} // namespace oomplan

#endif
