//===- Conv.cpp - CPU kernels: see CPUKernels.h for the family ----*- C++
//-*-===//
//
// (Being written: the family registers its kernels here.)
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"

namespace oomplan {
namespace runtime {
namespace cpu {

void registerConvKernels(CPUKernelTable &) {}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
