//===- Kernel.h - what a backend kernel sees and returns --------*- C++ -*-===//
//
// The contract between the runtime (lib/Runtime) and every backend's kernels.
// The runtime has already placed every tensor at its planned offset, so a
// kernel never allocates: it reads its inputs, writes its outputs (whose dims
// shape inference fixed before the run), and may use the workspace the plan
// reserved for its step. Kernels are found through the operator table
// (ops::KernelTable, keyed by OpCode), one entry per op type and backend.
//
// Aliasing rules a kernel must honour, because the plan relies on them:
// - An elementwise op (AliasClass InPlace) may get Outputs[0].Data equal to
//   an input's Data; it must then read each element before writing it.
// - A view op (AliasClass View) usually gets Outputs[0].Data equal to
//   Inputs[0].Data and then has nothing to do; when they differ (a view the
//   planner could not alias) it copies.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_KERNEL_H
#define OOMPLAN_RUNTIME_KERNEL_H

#include "oomplan/IR/ElementType.h"
#include "oomplan/IR/Graph.h"
#include "oomplan/IR/OpTable.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>

namespace oomplan {
namespace runtime {

/// A tensor as a kernel sees it: bytes at a planned offset, with concrete
/// dims. Data is null for an omitted optional input or output.
struct TensorRef {
  void *Data = nullptr;
  ElementType Type = ElementType::Undefined;
  llvm::SmallVector<int64_t, 6> Dims;

  bool present() const { return Data != nullptr; }
  /// Product of Dims (1 for a scalar).
  uint64_t numElements() const {
    uint64_t N = 1;
    for (int64_t D : Dims)
      N *= uint64_t(D);
    return N;
  }
  /// Bytes of its data (a sub-byte type's packed, rounded up).
  uint64_t bytes() const { return (numElements() * elementBits(Type) + 7) / 8; }
  template <typename T> T *data() const { return static_cast<T *>(Data); }
};

/// The physical cores this process may run on (hyper-threads of one core
/// counted once, as ONNX Runtime counts its default intra-op threads), at
/// least 1: what --threads defaults to.
unsigned physicalCores();

/// A fixed set of worker threads (--threads). parallelFor splits [0, N) into
/// contiguous chunks of at least Grain items and calls Fn(Begin, End) on
/// them, returning when all are done. With one thread it calls Fn(0, N).
/// Fn must not throw and must not call parallelFor itself.
class ThreadPool {
public:
  explicit ThreadPool(unsigned Threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned threads() const { return NumThreads; }
  void parallelFor(int64_t N, int64_t Grain,
                   llvm::function_ref<void(int64_t, int64_t)> Fn);

private:
  struct Impl;
  Impl *P = nullptr;
  unsigned NumThreads = 1;
};

/// Everything one kernel call gets.
struct KernelContext {
  const Graph &G;
  const Node &N; ///< Attributes, op type, name (for errors).
  llvm::ArrayRef<TensorRef> Inputs;
  llvm::ArrayRef<TensorRef> Outputs;
  void *Workspace = nullptr; ///< Planned scratch for this step, or null.
  uint64_t WorkspaceBytes = 0;
  ThreadPool &Pool;
  /// One entry per output, or null. Set for a step whose outputs have a
  /// data-dependent size (NonZero, Compress, Unique, TopK with a run-time
  /// k, NonMaxSuppression): the plan reserved their upper bound, which
  /// Outputs[I].Dims and ActualDims[I] hold on entry; the kernel writes
  /// the dims it produced into ActualDims[I] (same rank, at most as many
  /// elements), with the data packed densely for those dims. Null: every
  /// output's dims are exact. (Added after the first version: initializers
  /// that stop at Pool still compile.)
  llvm::SmallVector<int64_t, 6> *ActualDims = nullptr;
  /// Per input, or empty: on a device the host cannot touch, the input's
  /// value in host memory when the runtime knows it (a small weight or
  /// constant, or a shape value it computed on the host; Data null
  /// otherwise). Kernels that steer by an input's values (Slice's starts)
  /// read it here rather than from the device.
  llvm::ArrayRef<TensorRef> HostInputs = llvm::ArrayRef<TensorRef>();

  /// An unsupported-category error that names the node and op:
  /// "node 'conv1' (Conv): <Msg>".
  llvm::Error unsupported(const llvm::Twine &Msg) const;
  /// An input-category error (bad attribute, out-of-range index), likewise.
  llvm::Error badInput(const llvm::Twine &Msg) const;
};

/// Runs the op. Called once per Compute or Recompute step.
using KernelFn = llvm::Error (*)(const KernelContext &);

/// Bytes of scratch the kernel needs for this node at these shapes (only
/// Dims and Type of the refs are set, Data is null). The planner adds a
/// workspace buffer of this size to the step, so the plan counts it.
using WorkspaceFn = uint64_t (*)(const Node &N,
                                 llvm::ArrayRef<TensorRef> Inputs,
                                 llvm::ArrayRef<TensorRef> Outputs);

/// Why the kernel cannot run node N at these shapes and types (only Dims
/// and Type of the refs are set, Data is null), or "" when it can: what a
/// device's library cannot express (cuDNN's asymmetric padding, a pool's
/// dilations). Asked when the executor is made, so that such a step is
/// known before anything runs: on a device the host cannot touch it runs
/// as a host step (Executor.h, ExecOptions::HostSteps), else the plan is
/// refused with the reason.
using RefusesFn = std::string (*)(const Node &N,
                                  llvm::ArrayRef<TensorRef> Inputs,
                                  llvm::ArrayRef<TensorRef> Outputs);

struct Kernel {
  KernelFn Run = nullptr;
  WorkspaceFn Workspace = nullptr; ///< Null: no scratch.
  /// Element types of input 0 the kernel handles; empty: any.
  llvm::SmallVector<ElementType, 4> Types;
  /// Bit I set: the kernel never reads input I's bytes on the device (it
  /// uses only its dims, or its values through HostInputs). On a device the
  /// host cannot touch, a shape value computed on the host that only such
  /// inputs read is then never copied to the device.
  uint32_t DeviceUnread = 0;
  /// Null: the kernel runs every node its Types admit.
  RefusesFn Refuses = nullptr;
  /// On a device the host cannot touch, the kernel reports a data-dependent
  /// output's dims itself (KernelContext::ActualDims): it reads the size
  /// back and waits for it before it returns (CUDA's NonZero, Compress,
  /// TopK, OomplanIf). Without it a step that decides a size the later
  /// steps read runs as a host step.
  bool ReportsSizes = false;
  /// The optional parts of a fused op's contract this kernel implements,
  /// by name (fused::ConvAffineFeature): the fusion absorbs a part only
  /// when the executor's kernel lists it.
  llvm::SmallVector<llvm::StringRef, 1> Features = {};
  /// (Last, so that positional initializers keep their meaning.) Null,
  /// or a larger workspace that makes the kernel faster, which it
  /// takes when the plan gives it that many bytes (KernelContext::
  /// WorkspaceBytes). The executable's planner asks for it only where the
  /// arena stays as small as with Workspace's bytes (driver::
  /// planExecutable), so speed never costs planned memory.
  WorkspaceFn RoomyWorkspace = nullptr;
  /// Null, or the workspace of a path faster again than RoomyWorkspace's
  /// (usually larger): the planner tries every step's roomier one first,
  /// then the roomy ones, keeping the first plan whose arena is no larger
  /// than the plain plan's. Two levels, because one step's large
  /// workspace that raises the arena (a small model, batch 1) would
  /// otherwise cost every other step its roomy one.
  WorkspaceFn RoomierWorkspace = nullptr;
};

/// Puts K in a backend's table (ops::KernelTable<Kernel>) under OpType. An
/// op type without an operator-table record is a bug in the backend (the
/// planner must know every op's shape rule and aliasing), so it aborts
/// naming the backend and the op rather than returning an error no user
/// could act on.
void setKernel(ops::KernelTable<Kernel> &T, llvm::StringRef OpType, Kernel K,
               llvm::StringRef Backend);

} // namespace runtime
} // namespace oomplan

#endif
