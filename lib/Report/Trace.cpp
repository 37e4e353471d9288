//===- Trace.cpp - the plan as Chrome trace-event JSON --------------------===//
//
// Chrome's trace-event format (the JSON object form with "traceEvents"), read
// by chrome://tracing and ui.perfetto.dev. Process 1 is the arena, process 2
// the resident regions (weights, inputs and outputs); each buffer is one
// complete event on a lane (thread) where no other buffer overlaps it, so the
// viewers draw it unstacked. One counter track ("live bytes", process 0)
// gives the device bytes live at each step where they change.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Formulas.h"
#include "oomplan/Report/Timeline.h"
#include "llvm/Support/JSON.h"
#include <queue>

using namespace oomplan;
using namespace oomplan::report;

// Lane per buffer: greedy interval partitioning per process, by start step.
static std::vector<unsigned>
assignLanes(const Plan &P, llvm::ArrayRef<BufferId> Ids, unsigned &NumLanes) {
  std::vector<BufferId> Order(Ids.begin(), Ids.end());
  std::stable_sort(Order.begin(), Order.end(), [&](BufferId A, BufferId B) {
    return P.Life.Buffers[A].StartStep < P.Life.Buffers[B].StartStep;
  });
  using Slot = std::pair<uint64_t, unsigned>; // (end step, lane)
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> Free;
  std::vector<unsigned> Lane(P.Life.Buffers.size(), 0);
  NumLanes = 0;
  for (BufferId B : Order) {
    const LiveBuffer &L = P.Life.Buffers[B];
    unsigned Use;
    if (!Free.empty() && Free.top().first <= L.StartStep) {
      Use = Free.top().second;
      Free.pop();
    } else {
      Use = NumLanes++;
    }
    Lane[B] = Use;
    Free.push({std::max(L.EndStep, L.StartStep + 1), Use});
  }
  return Lane;
}

static void metadata(llvm::json::OStream &J, int Pid, llvm::StringRef Name) {
  J.object([&] {
    J.attribute("ph", "M");
    J.attribute("pid", Pid);
    J.attribute("tid", 0);
    J.attribute("name", "process_name");
    J.attributeObject("args", [&] { J.attribute("name", Name); });
  });
}

static void writeSlices(llvm::json::OStream &J, const Plan &P,
                        const PlanContext &C, bool Arena) {
  std::vector<BufferId> Ids;
  for (BufferId B = 0; B < P.Life.Buffers.size(); ++B)
    if ((P.RegionOf[B] == Region::Arena) == Arena)
      Ids.push_back(B);
  unsigned NumLanes = 0;
  std::vector<unsigned> Lane = assignLanes(P, Ids, NumLanes);
  int Pid = Arena ? 1 : 2;
  uint64_t N = std::max<uint64_t>(P.Life.NumSteps, 1);
  for (BufferId B : Ids) {
    const LiveBuffer &L = P.Life.Buffers[B];
    ValueId V = describedValue(P, C, L.Root);
    bool Resident =
        L.Kind == TensorKind::Weight || L.Kind == TensorKind::Constant;
    uint64_t Start = Resident ? 0 : L.StartStep;
    uint64_t End = Resident ? N : std::max(L.EndStep, Start + 1);
    J.object([&] {
      J.attribute("name", P.Sched.Tensors[L.Root].Name);
      J.attribute("cat", tensorKindName(L.Kind));
      J.attribute("ph", "X");
      J.attribute("pid", Pid);
      J.attribute("tid", static_cast<int64_t>(Lane[B]));
      J.attribute("ts", static_cast<int64_t>(Start));
      J.attribute("dur", static_cast<int64_t>(End - Start));
      J.attributeObject("args", [&] {
        J.attribute("bytes", static_cast<int64_t>(L.SizeBytes));
        J.attribute("kind", tensorKindName(L.Kind));
        J.attribute("shape", V == NoId ? "-" : shapeString(C, V));
        J.attribute("formula",
                    tensorFormula(P, C, L.Root).str(C.Shapes.SymbolNames));
        J.attribute("region", regionName(P.RegionOf[B]));
        J.attribute("offset", static_cast<int64_t>(P.OffsetOf[B]));
      });
    });
  }
}

void report::writeChromeTrace(llvm::raw_ostream &OS, const Plan &P,
                              const PlanContext &C, const MemoryReport &R) {
  llvm::json::OStream J(OS);
  J.object([&] {
    J.attribute("displayTimeUnit", "ns");
    J.attributeObject("otherData", [&] {
      J.attribute("generator", "oomplan");
      J.attribute("model", C.G.SourcePath);
      J.attribute("time_unit", "1 microsecond = 1 schedule step");
      J.attribute("peak_step", static_cast<int64_t>(R.Peak.Step));
      J.attribute("device_bytes", static_cast<int64_t>(R.DeviceBytes));
    });
    J.attributeArray("traceEvents", [&] {
      metadata(J, 0, "memory");
      metadata(J, 1, "arena");
      metadata(J, 2, "weights and io");
      std::vector<ClassBytes> Live = liveBytesByStep(P, R.Limit.OverheadBytes);
      uint64_t Prev = UINT64_MAX;
      for (size_t S = 0; S <= Live.size(); ++S) {
        uint64_t Sum = 0;
        if (S < Live.size())
          for (uint64_t B : Live[S])
            Sum += B;
        if (Sum == Prev)
          continue;
        Prev = Sum;
        J.object([&] {
          J.attribute("name", "live bytes");
          J.attribute("ph", "C");
          J.attribute("pid", 0);
          J.attribute("tid", 0);
          J.attribute("ts", static_cast<int64_t>(S));
          J.attributeObject(
              "args", [&] { J.attribute("bytes", static_cast<int64_t>(Sum)); });
        });
      }
      writeSlices(J, P, C, /*Arena=*/true);
      writeSlices(J, P, C, /*Arena=*/false);
    });
  });
  OS << '\n';
}
