//===- ProcessMemory.cpp - the process's resident-set high-water ----------===//
//
// Reads /proc/self/status; the kernel reports kB (KiB).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/ProcessMemory.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include <fstream>

using namespace oomplan;
using namespace oomplan::runtime;

llvm::Expected<ProcessMemory> runtime::readProcessMemory() {
  // /proc files report size 0: read them as a stream.
  auto Buf = llvm::MemoryBuffer::getFileAsStream("/proc/self/status");
  if (!Buf)
    return makeIOError("/proc/self/status: " + Buf.getError().message());
  ProcessMemory M;
  bool SawRSS = false, SawHWM = false;
  llvm::SmallVector<llvm::StringRef, 64> Lines;
  (*Buf)->getBuffer().split(Lines, '\n');
  for (llvm::StringRef L : Lines) {
    auto [Key, Rest] = L.split(':');
    uint64_t KiB;
    llvm::StringRef Num = Rest.trim();
    if (!Num.consume_back("kB") || Num.trim().getAsInteger(10, KiB))
      continue;
    if (Key == "VmRSS") {
      M.RSSBytes = KiB * 1024;
      SawRSS = true;
    } else if (Key == "VmHWM") {
      M.HWMBytes = KiB * 1024;
      SawHWM = true;
    }
  }
  if (!SawRSS || !SawHWM)
    return makeIOError("/proc/self/status has no VmRSS/VmHWM lines");
  return M;
}

llvm::Error runtime::resetPeakRSS() {
  std::ofstream F("/proc/self/clear_refs");
  F << "5";
  F.close();
  if (!F)
    return makeIOError("/proc/self/clear_refs: cannot reset the peak RSS");
  return llvm::Error::success();
}
