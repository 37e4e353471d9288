//===- PlanJSON.cpp - a plan as versioned JSON ----------------------------===//
//
// Schema PlanJSONSchema ("oomplan.plan/3"), documented in docs/plan-json.md.
// Byte counts are JSON integers (exact up to 2^53 in every reader; 8 PiB is
// beyond any device), offsets are relative to their region; a value that
// does not exist is null, and every key is always written. /3 adds what an
// executor of a fitted plan needs: the host region and its homes, each
// step's index, predicted seconds, host flag and the host homes an offload
// fills (the driver adds the "fit" object).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Plan/PlanPrinter.h"
#include "oomplan/Plan/TensorInfo.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include <map>

using namespace oomplan;

// shapeString/formulaString print "-" for a tensor without a graph value.
static llvm::json::Value orNull(const std::string &S) {
  if (S.empty() || S == "-")
    return nullptr;
  return S;
}

static void writeSummary(llvm::json::OStream &J, const Plan &P,
                         const PlanContext &C) {
  J.attribute("schema", PlanJSONSchema);
  J.attribute("model", C.G.SourcePath);
  J.attributeObject("symbols", [&] {
    for (size_t I = 0; I < C.Shapes.SymbolNames.size(); ++I) {
      if (I < C.Bindings.size() && C.Bindings[I])
        J.attribute(C.Shapes.SymbolNames[I], *C.Bindings[I]);
      else
        J.attribute(C.Shapes.SymbolNames[I], nullptr);
    }
  });
  J.attribute("algorithm", P.Algorithm);
  J.attribute("alignment", static_cast<int64_t>(P.AlignBytes));
  J.attribute("steps", static_cast<int64_t>(P.Life.NumSteps));
  J.attributeObject("regions", [&] {
    J.attribute("weights", static_cast<int64_t>(P.WeightBytes));
    J.attribute("io", static_cast<int64_t>(P.IOBytes));
    J.attribute("arena", static_cast<int64_t>(P.ArenaBytes));
    J.attribute("host", static_cast<int64_t>(P.HostBytes));
  });
  J.attribute("total_bytes", static_cast<int64_t>(P.totalBytes()));
  J.attribute("arena_lower_bound", static_cast<int64_t>(P.ArenaLowerBound));
  if (P.Limit.CapacityBytes)
    J.attribute("budget_bytes", static_cast<int64_t>(*P.Limit.CapacityBytes));
  else
    J.attribute("budget_bytes", nullptr);
  J.attribute("fits", P.fits());
  J.attribute("peak_step", static_cast<int64_t>(P.PeakStep));
  // Totals per kind: bytes of buffers of each kind (each buffer once).
  J.attributeObject("totals_by_kind", [&] {
    uint64_t Sum[7] = {};
    for (const LiveBuffer &B : P.Life.Buffers)
      Sum[static_cast<int>(B.Kind)] += B.SizeBytes;
    for (int K = 0; K < 7; ++K)
      J.attribute(tensorKindName(static_cast<TensorKind>(K)),
                  static_cast<int64_t>(Sum[K]));
  });
}

// The host home an Offload step of T fills: the transforms name the host
// copy after what they copy ("prefetched(x)" for a saved activation,
// "host(g)" for a gradient the host optimizer reads).
static std::vector<TensorId> hostWrites(const Plan &P, const Step &St,
                                        const llvm::StringMap<TensorId> &Host) {
  std::vector<TensorId> Out;
  for (TensorId T : St.Reads)
    for (const char *Prefix : {"prefetched(", "host("}) {
      auto It = Host.find(Prefix + P.Sched.Tensors[T].Name + ")");
      if (It != Host.end())
        Out.push_back(It->second);
    }
  return Out;
}

// The host home a Prefetch of T copies from: T's own home (an offloaded
// activation, a streamed weight), else the host copy the host optimizer
// updated ("master(w)" under mixed precision, else "host(w)").
static std::vector<TensorId> hostReads(const Plan &P, const Step &St,
                                       const llvm::StringMap<TensorId> &Host) {
  std::vector<TensorId> Out;
  for (TensorId T : St.Writes) {
    if (P.HostOffsetOf[T] != NoHostOffset) {
      Out.push_back(T);
      continue;
    }
    for (const char *Prefix : {"master(", "host("}) {
      auto It = Host.find(Prefix + P.Sched.Tensors[T].Name + ")");
      if (It != Host.end()) {
        Out.push_back(It->second);
        break;
      }
    }
  }
  return Out;
}

static llvm::StringMap<TensorId> hostTensors(const Plan &P) {
  llvm::StringMap<TensorId> Host;
  for (TensorId T = 0; T < P.HostOffsetOf.size(); ++T)
    if (P.HostOffsetOf[T] != NoHostOffset)
      Host.try_emplace(P.Sched.Tensors[T].Name, T);
  return Host;
}

static void writeSteps(llvm::json::OStream &J, const Plan &P,
                       const PlanContext &C, const PlanJSONOptions &O) {
  static const char *KindNames[] = {"compute",  "recompute", "offload",
                                    "prefetch", "backward",  "optimizer"};
  llvm::StringMap<TensorId> Host = hostTensors(P);
  auto Names = [&](llvm::ArrayRef<TensorId> Ts) {
    for (TensorId T : Ts)
      J.value(P.Sched.Tensors[T].Name);
  };
  J.attributeArray("schedule", [&] {
    for (size_t I = 0; I < P.Sched.Steps.size(); ++I) {
      const Step &S = P.Sched.Steps[I];
      J.object([&] {
        J.attribute("index", static_cast<int64_t>(I));
        J.attribute("kind", KindNames[static_cast<int>(S.Kind)]);
        J.attribute("op", S.Op);
        J.attribute("node", S.Node != NoId
                                ? llvm::json::Value(C.G.Nodes[S.Node].Name)
                                : llvm::json::Value(nullptr));
        J.attribute("on_host", S.OnHost);
        // A step of an If branch: the conditions it runs under, and
        // whether the analysis knows the branch is not taken (its buffers
        // hold zero bytes).
        J.attributeArray("guards", [&] {
          if (S.Node == NoId)
            return;
          for (const Guard &Gd : C.G.Nodes[S.Node].Guards)
            J.object([&] {
              J.attribute("cond", C.G.Values[Gd.Cond].Name);
              J.attribute("when", Gd.WhenTrue);
            });
        });
        J.attribute("branch_not_taken",
                    S.Node != NoId && neverRuns(C.Shapes, S.Node));
        if (I < O.StepSeconds.size())
          J.attribute("seconds", O.StepSeconds[I]);
        else
          J.attribute("seconds", nullptr);
        J.attributeArray("reads", [&] { Names(S.Reads); });
        J.attributeArray("writes", [&] { Names(S.Writes); });
        J.attributeArray("host_reads", [&] {
          if (S.Kind == StepKind::Prefetch)
            Names(hostReads(P, S, Host));
        });
        J.attributeArray("host_writes", [&] {
          if (S.Kind == StepKind::Offload)
            Names(hostWrites(P, S, Host));
        });
      });
    }
  });
}

// One entry per home: the tensors that share it, and whether it holds data
// before the first step (a streamed weight, optimizer state) or is filled
// by an offload or a host step.
static void writeHostBuffers(llvm::json::OStream &J, const Plan &P,
                             const PlanContext &C) {
  llvm::StringMap<TensorId> Host = hostTensors(P);
  std::vector<bool> Filled(P.Sched.Tensors.size(), false);
  for (const Step &S : P.Sched.Steps) {
    if (S.Kind == StepKind::Offload)
      for (TensorId T : hostWrites(P, S, Host))
        Filled[T] = true;
    if (S.OnHost)
      for (TensorId T : S.Writes)
        Filled[T] = true;
  }
  std::map<uint64_t, std::vector<TensorId>> ByOffset;
  for (TensorId T = 0; T < P.HostOffsetOf.size(); ++T)
    if (P.HostOffsetOf[T] != NoHostOffset)
      ByOffset[P.HostOffsetOf[T]].push_back(T);
  J.attributeArray("host_buffers", [&] {
    for (auto &Entry : ByOffset) {
      // Not a structured binding: C++17 lambdas cannot capture those (clang).
      uint64_t Offset = Entry.first;
      const std::vector<TensorId> &Ts = Entry.second;
      // Zero-size homes share an offset with the next: one entry each.
      std::vector<std::vector<TensorId>> Homes;
      for (TensorId T : Ts) {
        const ScheduleTensor &X = P.Sched.Tensors[T];
        bool Joined = false;
        for (auto &H : Homes)
          if (X.Value != NoId && P.Sched.Tensors[H[0]].Value == X.Value) {
            H.push_back(T);
            Joined = true;
          }
        if (!Joined)
          Homes.push_back({T});
      }
      for (const auto &H : Homes) {
        const ScheduleTensor &X = P.Sched.Tensors[H[0]];
        bool Initial = llvm::none_of(H, [&](TensorId T) { return Filled[T]; });
        J.object([&] {
          J.attribute("name", X.Name);
          J.attribute("region", "host");
          J.attribute("offset", static_cast<int64_t>(Offset));
          J.attribute("size", static_cast<int64_t>(X.SizeBytes));
          // A streamed weight's tensor is an activation on the device; its
          // home holds the weight.
          bool Weight =
              X.Value != NoId && C.G.Values[X.Value].Kind == ValueKind::Weight;
          J.attribute("kind", Weight ? "weight" : tensorKindName(X.Kind));
          J.attribute("initial", Initial);
          J.attributeArray("tensors", [&] {
            for (TensorId T : H)
              J.value(P.Sched.Tensors[T].Name);
          });
        });
      }
    }
  });
}

void oomplan::printPlanJSON(
    llvm::raw_ostream &OS, const Plan &P, const PlanContext &C,
    llvm::function_ref<void(llvm::json::OStream &)> Extra,
    const PlanJSONOptions &O) {
  llvm::json::OStream J(OS, 1);
  J.object([&] {
    writeSummary(J, P, C);
    if (Extra)
      Extra(J);
    J.attributeArray("buffers", [&] {
      for (BufferId B : bufferPrintOrder(P)) {
        const LiveBuffer &Buf = P.Life.Buffers[B];
        TensorId Root = Buf.Root;
        ValueId V = P.Sched.Tensors[Root].Value;
        J.object([&] {
          J.attribute("name", P.Sched.Tensors[Root].Name);
          J.attribute("region", regionName(P.RegionOf[B]));
          J.attribute("offset", static_cast<int64_t>(P.OffsetOf[B]));
          J.attribute("size", static_cast<int64_t>(Buf.SizeBytes));
          J.attribute("start", static_cast<int64_t>(Buf.StartStep));
          J.attribute("end", static_cast<int64_t>(Buf.EndStep));
          J.attribute("kind", tensorKindName(Buf.Kind));
          // The type and formula of the bytes counted (16-bit under mixed
          // precision), null when they do not give this size.
          TensorDescription D = describeTensor(P, C, Root);
          J.attribute("type", orNull(D.TypeText));
          J.attribute(
              "size_formula",
              orNull(D.HasFormula ? D.Formula.str(C.Shapes.SymbolNames) : "-"));
          const Node *N = nullptr;
          if (V != NoId && C.G.Values[V].Kind == ValueKind::NodeOutput)
            N = &C.G.Nodes[C.G.Values[V].Producer];
          J.attribute("node", N ? orNull(N->Name) : nullptr);
          J.attribute("op", N ? orNull(N->OpType) : nullptr);
          J.attributeArray("tensors", [&] {
            for (TensorId T : Buf.Members)
              J.value(P.Sched.Tensors[T].Name);
          });
        });
      }
    });
    writeHostBuffers(J, P, C);
    writeSteps(J, P, C, O);
  });
  OS << '\n';
}
