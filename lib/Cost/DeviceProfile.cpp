//===- DeviceProfile.cpp - built-in GPU profiles and JSON profiles --------===//
//
// Datasheet numbers (dense, without the 2:4 sparsity factor), decimal units
// for rates. docs/fitting.md lists the source of every row. Host links are
// PCIe x16, one direction: Gen4 32 GB/s, Gen5 64 GB/s (half the datasheets'
// bidirectional 64 and 128 GB/s). Memory is binary: a card sold as "80GB"
// has 80 GiB, the way GPU memory is quoted and the way --budget 80G reads;
// the H200's is the measured total nvidia-smi reports (the others are not
// measured: docs/fitting.md).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Cost/DeviceProfile.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include <cmath>

using namespace oomplan;

static constexpr double T = 1e12, G = 1e9;
static constexpr uint64_t GiB = 1ull << 30;

// Before compute capability 9 PyTorch's cuBLAS workspace is
// CUBLAS_WORKSPACE_CONFIG ":4096:2:16:8": 2 x 4 MiB + 8 x 16 KiB.
static DeviceProfile preHopper(DeviceProfile P) {
  P.CublasWorkspaceBytes = (8ull << 20) + (128ull << 10);
  return P;
}

static const DeviceProfile Profiles[] = {
    // Name, fp32, tf32, fp16, bf16 (tensor cores, fp32 accumulate), HBM,
    // host link, memory.
    {"H100-SXM", 67 * T, 494.7 * T, 989.4 * T, 989.4 * T, 3350 * G, 64 * G,
     80 * GiB},
    {"H100-PCIe", 51 * T, 378 * T, 756 * T, 756 * T, 2000 * G, 64 * G,
     80 * GiB},
    // H200: the efficiencies and the floor are what the single-kernel
    // models measured of oomplan-run's CUDA kernels
    // (utils/gpu/calibrate_profile.py on utils/gpu/calibration/, gpu-check's
    // section 4b; docs/h200-calibrated.json): bf16 tensor
    // products 0.7467 (a 4096^3 bf16 product), FP32 0.7621 (an SGEMM),
    // memory 0.2725 (Add, Transpose, LayerNormalization), dense
    // convolutions 0.4329 and depthwise 0.4981 of that roofline (cuDNN),
    // the fused attention 0.09678 (ours), 1.026 us a kernel (256 chained
    // launches). None of the four test models set a number; with them
    // each is within 0.82x to 1.18x of its measured steps
    // (docs/gpu-results.md). The overhead: oomplan-run's CUDA context
    // (527 MiB), library handles (78 MiB) and the 2 MiB cuBLAS takes in a
    // first run, rounded up to a MiB (607 MiB).
    // PyTorch eager (training plans): memory 0.90, a device-to-device copy
    // at 4.3 TB/s, and a 3 us floor, a usual eager launch gap, not
    // measured (gpu-check's section 4d measures both).
    // Memory: what nvidia-smi and cudaMemGetInfo report on the card, 143771
    // MiB (measured with PyTorch 2.11, driver 580), not the 141 GB sold.
    {"H200", 67 * T, 494.7 * T, 989.4 * T, 989.4 * T, 4800 * G, 64 * G,
     143771ull << 20, 100e9, 0.7467, 0.2725, 1.026e-6, 0.7621, 607ull << 20,
     0.4329, 0.4981, 0.09678, 0.90, 3e-6},
    preHopper({"A100-40GB", 19.5 * T, 156 * T, 312 * T, 312 * T, 1555 * G,
               32 * G, 40 * GiB}),
    preHopper({"A100-80GB", 19.5 * T, 156 * T, 312 * T, 312 * T, 2039 * G,
               32 * G, 80 * GiB}),
    preHopper(
        {"L4", 30.3 * T, 60 * T, 121 * T, 121 * T, 300 * G, 32 * G, 24 * GiB}),
    // GeForce: 16-bit tensor throughput with fp32 accumulate (what PyTorch
    // uses) is half the fp16-accumulate figure.
    preHopper({"RTX-4090", 82.6 * T, 82.6 * T, 165.2 * T, 165.2 * T, 1008 * G,
               32 * G, 24 * GiB}),
};

llvm::ArrayRef<DeviceProfile> oomplan::deviceProfiles() { return Profiles; }

// "rtx4090", "RTX 4090", "rtx-4090" all name the same row.
static std::string normalise(llvm::StringRef Name) {
  std::string Out;
  for (char C : Name.lower())
    if (llvm::isAlnum(C))
      Out += C;
  return Out;
}

llvm::Expected<DeviceProfile> oomplan::findDevice(llvm::StringRef Name) {
  std::string Want = normalise(Name);
  if (Want == "h100")
    Want = "h100sxm";
  if (Want == "a100")
    Want = "a10080gb";
  for (const DeviceProfile &P : Profiles)
    if (normalise(P.Name) == Want)
      return P;
  std::vector<std::string> Names;
  for (const DeviceProfile &P : Profiles)
    Names.push_back(P.Name);
  return makeInputError("unknown device '" + Name + "' (known: " +
                        llvm::join(Names, ", ") + ", or a .json file)");
}

llvm::Expected<DeviceProfile> oomplan::parseDeviceJSON(llvm::StringRef Text,
                                                       llvm::StringRef Path) {
  auto V = llvm::json::parse(Text);
  if (!V)
    return makeInputError(Path + ": " + llvm::toString(V.takeError()));
  const llvm::json::Object *O = V->getAsObject();
  if (!O)
    return makeInputError(Path + ": a device profile is a JSON object");
  DeviceProfile P;
  P.Name = O->getString("name").getValueOr("custom").str();
  // The first problem found, as text; empty when all is well.
  std::string Problem;
  auto Num = [&](llvm::StringRef Key, double Scale, double &Out, bool Required,
                 bool ZeroOK = false) {
    if (!Problem.empty())
      return;
    if (llvm::Optional<double> D = O->getNumber(Key)) {
      if (*D < 0 || (*D == 0 && !ZeroOK))
        Problem = "'" + Key.str() + "' must be " +
                  (ZeroOK ? "0 or more" : "positive");
      Out = *D * Scale;
    } else if (Required) {
      Problem = "missing number '" + Key.str() + "'";
    }
  };
  double Mem = 0;
  Num("peak_fp32_tflops", T, P.PeakFP32, true);
  P.PeakTF32 = P.PeakFP16 = P.PeakBF16 = P.PeakFP32;
  Num("peak_tf32_tflops", T, P.PeakTF32, false);
  Num("peak_fp16_tflops", T, P.PeakFP16, false);
  Num("peak_bf16_tflops", T, P.PeakBF16, false);
  Num("mem_bandwidth_gbps", G, P.MemBandwidth, true);
  Num("host_link_gbps", G, P.HostLinkBandwidth, true);
  // Memory in GiB, as cards are sold ("memory_gb" is the older key, read
  // the same way: a "24GB" card has 24 GiB).
  bool OldKey = !O->get("memory_gib") && O->get("memory_gb");
  Num(OldKey ? "memory_gb" : "memory_gib", double(GiB), Mem, true);
  Num("host_mem_bandwidth_gbps", G, P.HostMemBandwidth, false);
  Num("compute_efficiency", 1, P.ComputeEfficiency, false);
  P.FP32Efficiency = P.ComputeEfficiency;
  Num("fp32_efficiency", 1, P.FP32Efficiency, false);
  double OverheadMiB = 0;
  Num("overhead_mib", 1, OverheadMiB, false, /*ZeroOK=*/true);
  Num("memory_efficiency", 1, P.MemoryEfficiency, false);
  Num("kernel_us", 1e-6, P.KernelSeconds, false, /*ZeroOK=*/true); // no floor
  Num("conv_efficiency", 1, P.ConvEfficiency, false);
  Num("grouped_conv_efficiency", 1, P.GroupedConvEfficiency, false);
  Num("attention_efficiency", 1, P.AttentionEfficiency, false);
  Num("eager_memory_efficiency", 1, P.EagerMemoryEfficiency, false);
  double CublasMiB = double(P.CublasWorkspaceBytes) / double(1 << 20);
  Num("cublas_workspace_mib", 1, CublasMiB, false, /*ZeroOK=*/true);
  if (CublasMiB < double(1 << 20)) // 1 TiB: anything larger is a typo
    P.CublasWorkspaceBytes =
        static_cast<uint64_t>(std::ceil(CublasMiB * (1 << 20)));
  else if (Problem.empty())
    Problem = "cublas_workspace_mib is too large";
  if (O->getNumber("eager_kernel_us")) {
    P.EagerKernelSeconds = 0;
    Num("eager_kernel_us", 1e-6, P.EagerKernelSeconds, false, /*ZeroOK=*/true);
  }
  if (Problem.empty() &&
      (P.ComputeEfficiency > 1 || P.MemoryEfficiency > 1 ||
       P.FP32Efficiency > 1 || P.ConvEfficiency > 1 ||
       P.GroupedConvEfficiency > 1 || P.AttentionEfficiency > 1 ||
       P.EagerMemoryEfficiency > 1))
    Problem = "an efficiency is a fraction of the peak, at most 1";
  if (!Problem.empty())
    return makeInputError(Path + ": " + Problem);
  // Sizes are signed 64-bit in the report and JSON.
  if (!(Mem < 9.2e18))
    return makeInputError(Path + ": memory is too large (at most 8 EiB)");
  P.MemoryBytes = static_cast<uint64_t>(Mem);
  if (!(OverheadMiB < double(1ull << 42))) // 4 EiB in MiB
    return makeInputError(Path + ": overhead_mib is too large");
  P.OverheadBytes = static_cast<uint64_t>(std::ceil(OverheadMiB * (1 << 20)));
  return P;
}

llvm::Expected<DeviceProfile> oomplan::loadDevice(llvm::StringRef NameOrPath) {
  if (!NameOrPath.endswith(".json"))
    return findDevice(NameOrPath);
  auto Buf = llvm::MemoryBuffer::getFile(NameOrPath);
  if (!Buf)
    return makeIOError(NameOrPath + ": " + Buf.getError().message());
  return parseDeviceJSON((*Buf)->getBuffer(), NameOrPath);
}

// Twelve significant digits: the datasheet's 494.7 reads back as 494.7, not
// as the 17 digits of its nearest double.
static void number(llvm::json::OStream &J, llvm::StringRef Key, double V) {
  J.attributeBegin(Key);
  J.rawValue(llvm::formatv("{0}", llvm::format("%.12g", V)).str());
  J.attributeEnd();
}

void oomplan::writeDeviceJSON(llvm::json::OStream &J, const DeviceProfile &P) {
  J.objectBegin();
  J.attribute("name", P.Name);
  number(J, "peak_fp32_tflops", P.PeakFP32 / T);
  number(J, "peak_tf32_tflops", P.PeakTF32 / T);
  number(J, "peak_fp16_tflops", P.PeakFP16 / T);
  number(J, "peak_bf16_tflops", P.PeakBF16 / T);
  number(J, "mem_bandwidth_gbps", P.MemBandwidth / G);
  number(J, "host_link_gbps", P.HostLinkBandwidth / G);
  number(J, "memory_gib", double(P.MemoryBytes) / double(GiB));
  number(J, "host_mem_bandwidth_gbps", P.HostMemBandwidth / G);
  number(J, "compute_efficiency", P.ComputeEfficiency);
  number(J, "fp32_efficiency", P.FP32Efficiency);
  number(J, "memory_efficiency", P.MemoryEfficiency);
  number(J, "conv_efficiency", P.ConvEfficiency);
  number(J, "grouped_conv_efficiency", P.GroupedConvEfficiency);
  number(J, "attention_efficiency", P.AttentionEfficiency);
  number(J, "kernel_us", P.KernelSeconds / 1e-6);
  number(J, "overhead_mib", double(P.OverheadBytes) / double(1 << 20));
  // Only where set: a profile without them is costed with the ones above
  // for training plans too.
  if (P.EagerMemoryEfficiency > 0)
    number(J, "eager_memory_efficiency", P.EagerMemoryEfficiency);
  if (P.EagerKernelSeconds >= 0)
    number(J, "eager_kernel_us", P.EagerKernelSeconds / 1e-6);
  if (P.CublasWorkspaceBytes != DeviceProfile().CublasWorkspaceBytes)
    number(J, "cublas_workspace_mib",
           double(P.CublasWorkspaceBytes) / double(1 << 20));
  J.objectEnd();
}

DeviceProfile oomplan::eagerProfile(DeviceProfile P) {
  if (P.EagerMemoryEfficiency > 0)
    P.MemoryEfficiency = P.EagerMemoryEfficiency;
  if (P.EagerKernelSeconds >= 0)
    P.KernelSeconds = P.EagerKernelSeconds;
  P.EagerMemoryEfficiency = 0;
  P.EagerKernelSeconds = -1;
  return P;
}
