//===- HalfInFloat.h - float16/bfloat16 through a float kernel --*- C++ -*-===//
//
// Most kernels compute in float or double only. A float16 or bfloat16 model
// runs them anyway, as a GPU library does with half storage: the step's
// half operands are converted to float copies in its workspace (the
// backend's own Cast kernel, so the conversion runs where the data is), the
// float kernel runs on the copies, and each half output is rounded once,
// to nearest even, from the float result. The copies are planned bytes:
// the workspace query below is what the planner adds to the step, so a
// half model's plan counts them.
//
// Which steps: those whose kernel lists Float among its types and not the
// type of the step's first input, which is float16 or bfloat16. Every
// input and output of a half type gets a copy; others (indices, shapes, a
// bool mask) are passed as they are.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_HALFINFLOAT_H
#define OOMPLAN_RUNTIME_HALFINFLOAT_H

#include "oomplan/Runtime/Kernel.h"

namespace oomplan {
namespace runtime {

/// Float16 or BFloat16.
bool isHalfType(ElementType T);

/// Whether K runs a step whose first input is of type InType on float
/// copies (the rule above).
bool widensHalf(const Kernel &K, ElementType InType);

/// The planned scratch of a step of K: K's own workspace, plus the float
/// copies when widensHalf (In and Out carry Dims and Type only). Roomy,
/// a level: 0 the plain workspace; 1 K's RoomyWorkspace where it has one
/// and asks for more; 2 its RoomierWorkspace, else as 1 (a step on float
/// copies keeps the plain workspace).
uint64_t kernelWorkspace(const Kernel &K, const Node &N,
                         llvm::ArrayRef<TensorRef> In,
                         llvm::ArrayRef<TensorRef> Out, unsigned Roomy = 0);

/// The bytes of the float copy of a half operand of Elements elements: 4
/// each, rounded up to 256 (each copy starts at a 256-byte boundary of the
/// workspace, cuBLAS's and cuDNN's alignment). The planner-only path
/// (`oomplan --backend=cuda`) sums these too.
uint64_t halfCopyBytes(uint64_t Elements);

/// Runs K on float copies of C's half operands, converting with Cast (the
/// backend's Cast kernel, which converts Inputs[0] into Outputs[0]'s type).
/// C.Workspace holds kernelWorkspace's bytes.
llvm::Error runHalfInFloat(const KernelContext &C, const Kernel &K,
                           const Kernel &Cast);

} // namespace runtime
} // namespace oomplan

#endif
