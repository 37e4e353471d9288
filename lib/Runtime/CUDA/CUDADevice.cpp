//===- CUDADevice.cpp - device memory, streams and events on a GPU --------===//
//
// The regions are one cudaMalloc each (the host region one cudaHostAlloc,
// so that offloads and prefetches are truly asynchronous); nothing else is
// allocated on the device after openCUDABackend(). What the context and
// the library handles take is measured there, from cudaMemGetInfo, so
// that a run can report it beside the plan.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/Elementwise.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include "Kernels/Launch.h"
#include "oomplan/Runtime/CUDA.h"
#include "oomplan/Support/Error.h"
#include <cstring>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

static Context *TheContext = nullptr;

Context &cuda::context() { return *TheContext; }
bool cuda::haveContext() { return TheContext != nullptr; }
uint64_t cuda::blasWorkspaceBytes() {
  return blasWorkspaceFor(haveContext() ? context().ComputeMajor : 0);
}

llvm::Error cuda::cudaFailure(int Code, const llvm::Twine &What) {
  return makeIOError("CUDA: " + What + ": " +
                     cudaGetErrorString(cudaError_t(Code)));
}

llvm::Error cuda::kernelFailure(const KernelContext &C, int Code,
                                const llvm::Twine &What) {
  return makeIOError(C.G.describeNode(NodeId(&C.N - C.G.Nodes.data())) +
                     ": CUDA: " + What + ": " +
                     cudaGetErrorString(cudaError_t(Code)));
}

llvm::Error cuda::blasFailure(const KernelContext &C, cublasStatus_t S,
                              const llvm::Twine &What) {
  return makeIOError(C.G.describeNode(NodeId(&C.N - C.G.Nodes.data())) +
                     ": cuBLAS: " + What + ": " + cublasGetStatusString(S));
}

llvm::Error cuda::dnnFailure(const KernelContext &C, cudnnStatus_t S,
                             const llvm::Twine &What) {
  return makeIOError(C.G.describeNode(NodeId(&C.N - C.G.Nodes.data())) +
                     ": cuDNN: " + What + ": " + cudnnGetErrorString(S));
}

llvm::Error cuda::hostInts(const KernelContext &C, unsigned I,
                           llvm::SmallVectorImpl<int64_t> &Out) {
  Out.clear();
  if (I >= C.Inputs.size() || !C.Inputs[I].present())
    return llvm::Error::success();
  const TensorRef &T = C.Inputs[I];
  if (I < C.HostInputs.size() && C.HostInputs[I].present()) {
    const TensorRef &H = C.HostInputs[I];
    for (uint64_t K = 0; K < H.numElements(); ++K)
      Out.push_back(H.Type == ElementType::Int64 ? H.data<int64_t>()[K]
                    : H.Type == ElementType::Int32
                        ? int64_t(H.data<int32_t>()[K])
                        : 0);
    if (H.Type == ElementType::Int64 || H.Type == ElementType::Int32)
      return llvm::Error::success();
    Out.clear();
  }
  ValueId V = I < C.N.Inputs.size() ? C.N.Inputs[I] : NoId;
  if (V != NoId && C.G.Values[V].Data &&
      C.G.Values[V].Data->numElements() == T.numElements() &&
      C.G.Values[V].Data->Ints.size() == T.numElements()) {
    Out.assign(C.G.Values[V].Data->Ints.begin(),
               C.G.Values[V].Data->Ints.end());
    return llvm::Error::success();
  }
  uint64_t N = T.numElements();
  if (N > Context::ScratchInts)
    return C.unsupported("input " + llvm::Twine(I) + " has " + llvm::Twine(N) +
                         " values; the CUDA kernel reads at most " +
                         llvm::Twine(Context::ScratchInts) + " on the host");
  if (T.Type != ElementType::Int64 && T.Type != ElementType::Int32)
    return C.unsupported("input " + llvm::Twine(I) + " must be int32 or int64");
  Context &X = context();
  uint64_t EB = T.Type == ElementType::Int64 ? 8 : 4;
  if (int E = cudaMemcpyAsync(X.HostScratch, T.Data, N * EB,
                              cudaMemcpyDeviceToHost, X.Compute))
    return kernelFailure(C, E, "reading input " + llvm::Twine(I));
  if (int E = cudaStreamSynchronize(X.Compute))
    return kernelFailure(C, E, "reading input " + llvm::Twine(I));
  const int32_t *P32 = reinterpret_cast<const int32_t *>(X.HostScratch);
  for (uint64_t K = 0; K < N; ++K)
    Out.push_back(EB == 8 ? X.HostScratch[K] : P32[K]);
  return llvm::Error::success();
}

llvm::Expected<double> cuda::hostScalar(const KernelContext &C, unsigned I) {
  const TensorRef &T = C.Inputs[I];
  if (I < C.HostInputs.size() && C.HostInputs[I].present()) {
    const TensorRef &H = C.HostInputs[I];
    switch (H.Type) {
    case ElementType::Float:
      return double(H.data<float>()[0]);
    case ElementType::Double:
      return H.data<double>()[0];
    case ElementType::Int32:
      return double(H.data<int32_t>()[0]);
    case ElementType::Int64:
      return double(H.data<int64_t>()[0]);
    case ElementType::Bool:
      return H.data<bool>()[0] ? 1.0 : 0.0;
    case ElementType::Float16:
    case ElementType::BFloat16:
      return cpu::halfBitsToFloat(H.Type, H.data<uint16_t>()[0]);
    default:
      break;
    }
  }
  ValueId V = I < C.N.Inputs.size() ? C.N.Inputs[I] : NoId;
  if (V != NoId && C.G.Values[V].Data) {
    const TensorData &D = *C.G.Values[V].Data;
    if (!D.Floats.empty())
      return D.Floats[0];
    if (!D.Ints.empty())
      return double(D.Ints[0]);
  }
  Context &X = context();
  uint64_t EB = elementBits(T.Type) / 8;
  if (EB == 0 || EB > 8)
    return C.unsupported("input " + llvm::Twine(I) +
                         " has an unsupported type");
  if (int E = cudaMemcpyAsync(X.HostScratch, T.Data, EB, cudaMemcpyDeviceToHost,
                              X.Compute))
    return kernelFailure(C, E, "reading input " + llvm::Twine(I));
  if (int E = cudaStreamSynchronize(X.Compute))
    return kernelFailure(C, E, "reading input " + llvm::Twine(I));
  const void *P = X.HostScratch;
  switch (T.Type) {
  case ElementType::Float:
    return double(*static_cast<const float *>(P));
  case ElementType::Double:
    return *static_cast<const double *>(P);
  case ElementType::Int32:
    return double(*static_cast<const int32_t *>(P));
  case ElementType::Int64:
    return double(*static_cast<const int64_t *>(P));
  case ElementType::Bool:
    return *static_cast<const unsigned char *>(P) ? 1.0 : 0.0;
  case ElementType::Float16:
  case ElementType::BFloat16:
    return cpu::halfBitsToFloat(T.Type, *static_cast<const uint16_t *>(P));
  default:
    return C.unsupported("input " + llvm::Twine(I) +
                         " must be a float, int32, int64 or bool");
  }
}

llvm::Error cuda::hostDoubles(const KernelContext &C, unsigned I,
                              llvm::SmallVectorImpl<double> &Out) {
  Out.clear();
  if (I >= C.Inputs.size() || !C.Inputs[I].present())
    return llvm::Error::success();
  const TensorRef &T = C.Inputs[I];
  const uint64_t N = T.numElements();
  auto Read = [&](const TensorRef &H) {
    for (uint64_t K = 0; K < N; ++K)
      Out.push_back(H.Type == ElementType::Float    ? double(H.data<float>()[K])
                    : H.Type == ElementType::Double ? H.data<double>()[K]
                    : H.Type == ElementType::Int64
                        ? double(H.data<int64_t>()[K])
                        : double(H.data<int32_t>()[K]));
  };
  const bool Known =
      T.Type == ElementType::Float || T.Type == ElementType::Double ||
      T.Type == ElementType::Int64 || T.Type == ElementType::Int32;
  if (!Known)
    return C.unsupported("input " + llvm::Twine(I) +
                         " must be float, double, int32 or int64");
  if (I < C.HostInputs.size() && C.HostInputs[I].present() &&
      C.HostInputs[I].Type == T.Type) {
    Read(C.HostInputs[I]);
    return llvm::Error::success();
  }
  ValueId V = I < C.N.Inputs.size() ? C.N.Inputs[I] : NoId;
  if (V != NoId && C.G.Values[V].Data &&
      C.G.Values[V].Data->numElements() == N) {
    const TensorData &D = *C.G.Values[V].Data;
    if (D.Floats.size() == N) {
      Out.assign(D.Floats.begin(), D.Floats.end());
      return llvm::Error::success();
    }
    if (D.Ints.size() == N) {
      for (int64_t X : D.Ints)
        Out.push_back(double(X));
      return llvm::Error::success();
    }
  }
  if (N > Context::ScratchInts)
    return C.unsupported("input " + llvm::Twine(I) + " has " + llvm::Twine(N) +
                         " values; the CUDA kernel reads at most " +
                         llvm::Twine(Context::ScratchInts) + " on the host");
  Context &X = context();
  TensorRef H = T;
  H.Data = X.HostScratch;
  if (int E = cudaMemcpyAsync(X.HostScratch, T.Data, T.bytes(),
                              cudaMemcpyDeviceToHost, X.Compute))
    return kernelFailure(C, E, "reading input " + llvm::Twine(I));
  if (int E = cudaStreamSynchronize(X.Compute))
    return kernelFailure(C, E, "reading input " + llvm::Twine(I));
  Read(H);
  return llvm::Error::success();
}

namespace {
// A non-null address for a zero-byte region: never dereferenced (every
// kernel returns before touching zero elements), never freed.
char *const EmptyRegion = reinterpret_cast<char *>(uintptr_t(256));

class CUDADevice final : public Device {
public:
  llvm::StringRef name() const override { return "cuda"; }
  bool hostVisible() const override { return false; }
  uint64_t minAlignment() const override { return 16; }
  llvm::Expected<void *> allocate(Region R, uint64_t Bytes) override {
    if (Bytes == 0)
      return static_cast<void *>(EmptyRegion);
    void *P = nullptr;
    int E = R == Region::Host ? cudaHostAlloc(&P, Bytes, cudaHostAllocDefault)
                              : cudaMalloc(&P, Bytes);
    if (E) {
      // Clear it: the launchers return cudaGetLastError(), so the next
      // kernel would otherwise report this out-of-memory as its own.
      cudaGetLastError();
      return cudaFailure(E, "allocating the " + regionName(R) + " region (" +
                                llvm::Twine(Bytes) + " bytes)");
    }
    return P;
  }
  void release(Region R, void *P) override {
    if (P == EmptyRegion)
      return;
    if (R == Region::Host)
      cudaFreeHost(P);
    else
      cudaFree(P);
  }
  llvm::Error copy(void *Dst, const void *Src, uint64_t Bytes, CopyKind K,
                   Queue Q) override {
    if (!Bytes)
      return llvm::Error::success();
    cudaMemcpyKind Kind = K == CopyKind::HostToDevice ? cudaMemcpyHostToDevice
                          : K == CopyKind::DeviceToHost
                              ? cudaMemcpyDeviceToHost
                              : cudaMemcpyDeviceToDevice;
    if (int E = cudaMemcpyAsync(Dst, Src, Bytes, Kind, stream(Q)))
      return cudaFailure(E, "copying " + llvm::Twine(Bytes) + " bytes");
    return llvm::Error::success();
  }
  llvm::Error writeSmall(void *Dst, const void *Src, uint64_t Bytes,
                         Queue Q) override {
    SmallBytes V;
    if (Bytes > sizeof(V.B))
      return copy(Dst, Src, Bytes, CopyKind::HostToDevice, Q);
    V.N = uint32_t(Bytes);
    std::memcpy(V.B, Src, Bytes);
    if (int E = writeBytes(Dst, V, stream(Q)))
      return cudaFailure(E, "writing " + llvm::Twine(Bytes) + " bytes");
    return llvm::Error::success();
  }
  llvm::Error fill(void *Dst, uint64_t Bytes, uint64_t Pattern,
                   unsigned PatternBytes, Queue Q) override {
    if (int E = cuda::fill(Dst, Bytes, Pattern, int(PatternBytes), stream(Q)))
      return cudaFailure(E, "filling " + llvm::Twine(Bytes) + " bytes");
    return llvm::Error::success();
  }
  // N more events in To, returning the first's index: ordering events
  // (DisableTiming, cheaper to record and wait for) or timing ones.
  static llvm::Expected<unsigned> appendEvents(std::vector<cudaEvent_t> &To,
                                               unsigned N, unsigned Flags) {
    std::lock_guard<std::mutex> G(context().Lock);
    unsigned Base = unsigned(To.size());
    for (unsigned I = 0; I < N; ++I) {
      cudaEvent_t Ev;
      if (int E = cudaEventCreateWithFlags(&Ev, Flags))
        return cudaFailure(E, "creating an event");
      To.push_back(Ev);
    }
    return Base;
  }
  llvm::Expected<unsigned> createEvents(unsigned N) override {
    return appendEvents(context().Events, N, cudaEventDisableTiming);
  }
  llvm::Error record(unsigned Event, Queue Q) override {
    if (int E = cudaEventRecord(context().Events[Event], stream(Q)))
      return cudaFailure(E, "recording an event");
    return llvm::Error::success();
  }
  llvm::Error wait(unsigned Event, Queue Q) override {
    if (int E = cudaStreamWaitEvent(stream(Q), context().Events[Event], 0))
      return cudaFailure(E, "waiting for an event");
    return llvm::Error::success();
  }
  llvm::Error synchronize() override {
    Context &X = context();
    if (int E = cudaStreamSynchronize(X.Copy))
      return cudaFailure(E, "a kernel or copy failed");
    // The Gather flag comes back on the compute stream into pinned
    // scratch, so one wait covers the steps and the flag (a blocking copy
    // to pageable memory would be a second round trip on every run).
    int *Flag =
        reinterpret_cast<int *>(X.HostScratch + Context::ScratchInts - 1);
    int E = cudaMemcpyAsync(Flag, X.BadIndex, sizeof(int),
                            cudaMemcpyDeviceToHost, X.Compute);
    if (!E)
      E = cudaStreamSynchronize(X.Compute);
    if (E)
      return cudaFailure(E, "a kernel or copy failed");
    int Bad = *Flag;
    if (Bad) {
      // On the compute stream: a cudaMemset goes on the legacy stream,
      // which the non-blocking compute stream does not wait for, so a
      // later run's Gather could raise the flag before it is cleared.
      if (int E = cudaMemsetAsync(X.BadIndex, 0, sizeof(int), X.Compute))
        return cudaFailure(E, "clearing the index-error flag");
      return makeInputError(
          "an index of a Gather, GatherElements, GatherND, "
          "GatherBlockQuantized, ScatterElements, ScatterND or "
          "TensorScatter, a RoiAlign "
          "batch index, a recurrent op's sequence length, or a "
          "GroupQueryAttention's seqlens_k, total_sequence_length or "
          "position_ids was out of range (a gather's output holds zeros "
          "there; a scatter skipped that update; a length counted as the "
          "nearest bound; the attention's rows are zeros or left)");
    }
    return llvm::Error::success();
  }
  // CUDA graphs: stream capture of the compute stream, with the copy
  // stream forked into it and joined back, so that offloads and prefetches
  // are nodes of the graph with their events as edges.
  bool canRecord() const override { return true; }
  llvm::Error beginRecording() override {
    Context &X = context();
    if (int E = cudaStreamBeginCapture(X.Compute,
                                       cudaStreamCaptureModeThreadLocal)) {
      cudaGetLastError(); // the step-by-step fallback's first kernel reads it
      return cudaFailure(E, "beginning a CUDA graph capture");
    }
    int E = cudaEventRecord(X.Fork, X.Compute);
    if (!E)
      E = cudaStreamWaitEvent(X.Copy, X.Fork, 0);
    if (E) {
      cudaGraph_t G = nullptr;
      cudaStreamEndCapture(X.Compute, &G);
      if (G)
        cudaGraphDestroy(G);
      cudaGetLastError();
      return cudaFailure(E, "forking the copy stream into the capture");
    }
    X.Capturing = true;
    return llvm::Error::success();
  }
  llvm::Expected<unsigned> endRecording() override {
    Context &X = context();
    X.Capturing = false;
    int Join = cudaEventRecord(X.Join, X.Copy);
    if (!Join)
      Join = cudaStreamWaitEvent(X.Compute, X.Join, 0);
    cudaGraph_t G = nullptr;
    int E = cudaStreamEndCapture(X.Compute, &G);
    if (E || Join || !G) {
      if (G)
        cudaGraphDestroy(G);
      cudaGetLastError(); // capture errors are not sticky: clear them
      return cudaFailure(E      ? E
                         : Join ? Join
                                : int(cudaErrorUnknown),
                         "capturing the run as a CUDA graph");
    }
    cudaGraphExec_t Exec = nullptr;
    E = cudaGraphInstantiate(&Exec, G, 0);
    cudaGraphDestroy(G);
    // Uploaded now, so that the device memory a graph takes is taken
    // while recording (the executor's later-runs drop), not at some launch.
    if (!E && (E = cudaGraphUpload(Exec, X.Compute)) == 0)
      E = cudaStreamSynchronize(X.Compute);
    if (E) {
      if (Exec)
        cudaGraphExecDestroy(Exec);
      cudaGetLastError();
      return cudaFailure(E, "instantiating the CUDA graph");
    }
    std::lock_guard<std::mutex> Lock(X.Lock);
    X.Graphs.push_back(Exec);
    return unsigned(X.Graphs.size() - 1);
  }
  void dropRecording(unsigned Id) override {
    Context &X = context();
    std::lock_guard<std::mutex> Lock(X.Lock);
    if (Id < X.Graphs.size() && X.Graphs[Id]) {
      cudaGraphExecDestroy(X.Graphs[Id]);
      X.Graphs[Id] = nullptr;
    }
  }
  llvm::Error replay(unsigned Id) override {
    Context &X = context();
    if (int E = cudaGraphLaunch(X.Graphs[Id], X.Compute))
      return cudaFailure(E, "launching the CUDA graph");
    return llvm::Error::success();
  }

  llvm::Expected<unsigned> createTimers(unsigned N) override {
    return appendEvents(context().Timers, N, cudaEventDefault); // timing
  }
  llvm::Error mark(unsigned Timer, Queue Q) override {
    Context &X = context();
    if (Timer >= X.Timers.size())
      return makeInternalError("timer " + llvm::Twine(Timer) + " not created");
    // In a capture a plain record is only an edge of the graph; an
    // external one is a node that each replay records, so --profile times
    // the graph's steps (Executor.cpp, collectStepTimes, checks it did).
    if (int E = X.Capturing
                    ? cudaEventRecordWithFlags(X.Timers[Timer], stream(Q),
                                               cudaEventRecordExternal)
                    : cudaEventRecord(X.Timers[Timer], stream(Q)))
      return cudaFailure(E, "recording a timing event");
    return llvm::Error::success();
  }
  std::optional<double> secondsBetween(unsigned From, unsigned To) override {
    Context &X = context();
    float Ms = 0;
    if (From >= X.Timers.size() || To >= X.Timers.size())
      return std::nullopt;
    if (cudaEventElapsedTime(&Ms, X.Timers[From], X.Timers[To])) {
      cudaGetLastError(); // not recorded: no time, and no sticky error
      return std::nullopt;
    }
    return double(Ms) / 1e3;
  }
  DeviceOverhead overhead() const override { return context().Overhead; }
  std::optional<uint64_t> freeBytes() override {
    size_t Free = 0, Total = 0;
    if (cudaMemGetInfo(&Free, &Total)) {
      cudaGetLastError();
      return std::nullopt;
    }
    return Free;
  }

private:
  static cudaStream_t stream(Queue Q) {
    return Q == Queue::Copy ? context().Copy : context().Compute;
  }
};

llvm::Error openContext(Context &X) {
  int Count = 0;
  if (int E = cudaGetDeviceCount(&Count))
    return makeIOError(
        llvm::Twine("--backend=cuda: no usable CUDA device (") +
        cudaGetErrorString(cudaError_t(E)) +
        "); run on a machine with an NVIDIA GPU and driver, or use "
        "--backend=cpu (--backend=cuda-on-cpu rehearses the CUDA run "
        "without a GPU)");
  if (Count == 0)
    return makeIOError("--backend=cuda: no CUDA device is visible "
                       "(CUDA_VISIBLE_DEVICES?); use --backend=cpu "
                       "(--backend=cuda-on-cpu rehearses the CUDA run "
                       "without a GPU)");
  if (int E = cudaSetDevice(X.DeviceId))
    return cudaFailure(E, "selecting device 0");
  if (int E = cudaDeviceGetAttribute(
          &X.ComputeMajor, cudaDevAttrComputeCapabilityMajor, X.DeviceId))
    return cudaFailure(E, "reading the compute capability");
  // The context is created by the first call that needs one; what it takes
  // is the device's used memory right after (any other process's share
  // included: run alone on the device for a clean figure).
  if (int E = cudaFree(nullptr))
    return cudaFailure(E, "creating the context");
  size_t Free0 = 0, Total = 0;
  if (int E = cudaMemGetInfo(&Free0, &Total))
    return cudaFailure(E, "reading free memory");
  X.Overhead.ContextBytes = Total - Free0;
  if (int E = cudaStreamCreateWithFlags(&X.Compute, cudaStreamNonBlocking))
    return cudaFailure(E, "creating the compute stream");
  if (int E = cudaStreamCreateWithFlags(&X.Copy, cudaStreamNonBlocking))
    return cudaFailure(E, "creating the copy stream");
  if (cublasStatus_t S = cublasCreate(&X.Blas))
    return makeIOError(llvm::Twine("cuBLAS: creating a handle: ") +
                       cublasGetStatusString(S));
  // Before any cublasSetWorkspace: cublasSetStream resets the workspace to
  // cuBLAS's own pool.
  if (cublasStatus_t S = cublasSetStream(X.Blas, X.Compute))
    return makeIOError(llvm::Twine("cuBLAS: setting the stream: ") +
                       cublasGetStatusString(S));
  // Full FP32: no TF32 (outputs are compared with the CPU at rtol 1e-3).
  // The default math mode computes FP32 GEMMs as CUBLAS_COMPUTE_32F, which
  // never rounds to TF32 (that takes CUBLAS_TF32_TENSOR_OP_MATH); it is
  // what PyTorch sets with allow_tf32 off. Pedantic math would also forbid
  // cuBLAS's faster FP32 kernels, which NVIDIA documents as possibly slower,
  // and the latency bar is against that PyTorch.
  if (cublasStatus_t S = cublasSetMathMode(X.Blas, CUBLAS_DEFAULT_MATH))
    return makeIOError(llvm::Twine("cuBLAS: setting the math mode: ") +
                       cublasGetStatusString(S));
  if (cudnnStatus_t S = cudnnCreate(&X.Dnn))
    return makeIOError(llvm::Twine("cuDNN: creating a handle: ") +
                       cudnnGetErrorString(S));
  if (cudnnStatus_t S = cudnnSetStream(X.Dnn, X.Compute))
    return makeIOError(llvm::Twine("cuDNN: setting the stream: ") +
                       cudnnGetErrorString(S));
  for (cudaEvent_t *Ev : {&X.Fork, &X.Join})
    if (int E = cudaEventCreateWithFlags(Ev, cudaEventDisableTiming))
      return cudaFailure(E, "creating an event");
  // One allocation for the flag and, 8 bytes in, the count a kernel hands
  // back to the host (Context::DeviceCount).
  if (int E = cudaMalloc(&X.BadIndex, 16))
    return cudaFailure(E, "allocating the index-error flag");
  X.DeviceCount =
      reinterpret_cast<int64_t *>(reinterpret_cast<char *>(X.BadIndex) + 8);
  // Done before any kernel: the legacy stream's cudaMemset would not be
  // ordered with the non-blocking compute stream.
  if (int E = cudaMemsetAsync(X.BadIndex, 0, sizeof(int), X.Compute))
    return cudaFailure(E, "clearing the index-error flag");
  if (int E = cudaStreamSynchronize(X.Compute))
    return cudaFailure(E, "clearing the index-error flag");
  if (int E =
          cudaHostAlloc(&X.HostScratch, Context::ScratchInts * sizeof(int64_t),
                        cudaHostAllocDefault))
    return cudaFailure(E, "allocating pinned scratch");
  size_t Free1 = 0;
  if (int E = cudaMemGetInfo(&Free1, &Total))
    return cudaFailure(E, "reading free memory");
  X.Overhead.HandleBytes = Free0 >= Free1 ? Free0 - Free1 : 0;
  return llvm::Error::success();
}
} // namespace

const KernelTable &cuda::cudaKernelTable() { return cudaKernels(); }

llvm::Expected<Backend> cuda::openCUDABackend() {
  static std::once_flag Once;
  static std::optional<std::string> Failure;
  static CUDADevice Dev;
  std::call_once(Once, [] {
    auto *X = new Context(); // lives as long as the process
    if (llvm::Error E = openContext(*X))
      Failure = llvm::toString(std::move(E));
    else
      TheContext = X;
  });
  if (Failure)
    return makeIOError(*Failure);
  return Backend{&cudaKernels(), &Dev};
}
