//===- ExecutorWeights.cpp - the weights into their planned bytes ---------===//
//
// Executor::loadWeights: the weight loader (WeightLoader.h, external data
// under the model folder's rules) reads each initializer and Constant into
// its planned offset; a streamed weight into its host home. On a device
// the host cannot touch each is read into a host buffer and copied once,
// and the small ones stay known on the host (HostShapes.cpp reads them),
// as do those a host step reads (HostSteps.cpp).
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "oomplan/Frontend/WeightLoader.h"
#include "oomplan/Runtime/RandomInputs.h"
#include "oomplan/Support/Error.h"

using namespace oomplan;
using namespace oomplan::runtime;

llvm::Error Executor::loadWeights(llvm::StringRef ModelPath,
                                  std::optional<llvm::StringRef> Bytes,
                                  std::optional<uint64_t> RandomMissingSeed) {
  Impl &X = *I;
  // A device the host cannot touch: each tensor is read into host staging
  // and copied after the loader is done with it.
  std::vector<std::pair<TensorId, HostBuffer>> Staged;
  std::vector<HostBuffer> Dropped;
  bool Stage = !X.Dev.hostVisible();
  llvm::Error E = loadTensorData(
      X.G, ModelPath,
      [&](ValueId V, uint64_t Bytes) {
        // Before any transform the first tensors are the graph's values.
        if (V >= X.P.Sched.Tensors.size() || X.P.Sched.Tensors[V].Value != V ||
            !X.Info.Present[V])
          return static_cast<void *>(nullptr);
        // A Constant of an If branch that the analysis knows is not taken
        // is a zero-byte placeholder: its value is read and dropped.
        const Value &Val = X.G.Values[V];
        if (X.tensorBytes(V) == 0 && Bytes != 0 &&
            Val.Kind == ValueKind::NodeOutput &&
            !X.G.Nodes[Val.Producer].Guards.empty()) {
          Dropped.push_back(hostBuffer(Bytes));
          return static_cast<void *>(Dropped.back().get());
        }
        if (X.tensorBytes(V) != Bytes)
          return static_cast<void *>(nullptr);
        // A streamed weight's bytes live in its host home; prefetches copy
        // them to the device.
        if (X.HostAddr[V]) {
          X.touchHost(V);
          return static_cast<void *>(X.HostAddr[V]);
        }
        X.touch(V); // written now, whether or not a step reads it
        if (!Stage)
          return static_cast<void *>(X.Addr[V]);
        Staged.emplace_back(V, hostBuffer(Bytes));
        return static_cast<void *>(Staged.back().second.get());
      },
      Bytes,
      RandomMissingSeed
          ? MissingTensorFill([&](ValueId V, ElementType Type,
                                  llvm::ArrayRef<int64_t> Dims, void *Dst) {
              TensorRef T;
              T.Type = Type;
              T.Dims.assign(Dims.begin(), Dims.end());
              T.Data = Dst;
              fillRandomWeight(T, *RandomMissingSeed, V);
            })
          : MissingTensorFill(nullptr));
  if (E)
    return E;
  for (auto &[T, Buf] : Staged)
    if (!Buf)
      return makeIOError("cannot allocate a host buffer to load '" +
                         X.P.Sched.Tensors[T].Name + "'");
  for (auto &[T, Buf] : Staged)
    if (llvm::Error E = X.Dev.copy(X.Addr[T], Buf.get(), X.tensorBytes(T),
                                   CopyKind::HostToDevice, Queue::Compute))
      return E;
  if (llvm::Error E = X.Dev.synchronize())
    return E;
  // Small values stay known on the host (shape arithmetic reads them), and
  // so do the weights host steps read (HostSteps.cpp).
  X.HostWeight.clear();
  X.HostWeightBytes = 0;
  for (auto &[T, Buf] : Staged) {
    if (X.tensorBytes(T) <= MaxHostValueBytes) {
      X.HostVal[T] = std::move(Buf);
    } else if (X.hostStepReads(T)) {
      X.HostWeightBytes += X.tensorBytes(T);
      X.HostWeight[T] = std::move(Buf);
    }
  }
  // New weights may change the shape values computed on the host, and a
  // recording holds them: both are made again at the next run.
  X.HostShapesDone = false;
  X.dropRecording();
  X.RecordFailed = false;
  return llvm::Error::success();
}
