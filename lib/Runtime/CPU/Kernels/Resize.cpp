#include "../CPUKernels.h"
#include "TensorUtil.h"
namespace oomplan {
namespace runtime {
namespace cpu {
void registerResizeKernels(CPUKernelTable &) {}
} // namespace cpu
} // namespace runtime
} // namespace oomplan
