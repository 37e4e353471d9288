//===- AllocatorReport.cpp - allocated, reserved, fragmentation -----------===//
//
// Runs the plan's allocations through the caching allocator simulation and
// formats what PyTorch would report: max_memory_allocated,
// max_memory_reserved, their difference, and, under a budget, whether the
// allocator runs out of memory first. When it does although the tensors fit,
// the settings users set against fragmentation (expandable_segments,
// max_split_size_mb) are simulated too, so the advice is checked.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/AllocatorReport.h"
#include "oomplan/Report/Breakdown.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/CheckedMath.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace oomplan;
using namespace oomplan::report;

bool AllocatorReport::fragmentationTipsOver() const {
  return outOfMemory() && LimitBytes && Unlimited.PeakAllocated <= *LimitBytes;
}

AllocatorReport
report::buildAllocatorReport(const Plan &P, const CudaAllocConfig &Config,
                             llvm::StringRef ConfigText, unsigned Iterations,
                             const Budget &Limit,
                             std::vector<LibraryAllocation> Libraries) {
  AllocatorReport A;
  A.Libraries = std::move(Libraries);
  A.ConfigText = ConfigText.str();
  A.Iterations = Iterations;
  A.Limit = Limit;
  std::vector<AllocEvent> Events = allocationEvents(P, Iterations, A.Libraries);
  A.NumEvents = Events.size();
  A.Unlimited = simulateCachingAllocator(Events, Config);
  A.LimitBytes = Limit.roomBytes();
  if (!A.LimitBytes)
    return A;
  A.UnderBudget = simulateCachingAllocator(Events, Config, A.LimitBytes);
  if (!A.outOfMemory())
    return A;
  A.OOMBytes = Events[*A.UnderBudget->OOMEvent].Bytes;
  // The two settings PyTorch's own out-of-memory message and its docs
  // suggest against fragmentation.
  std::vector<std::pair<std::string, CudaAllocConfig>> Tries;
  if (!Config.ExpandableSegments) {
    CudaAllocConfig E = Config;
    E.ExpandableSegments = true;
    Tries.push_back({"expandable_segments:True", E});
  }
  for (uint64_t MB : {512, 128}) {
    CudaAllocConfig M = Config;
    M.MaxSplitSize = MB << 20;
    if (M.MaxSplitSize < Config.MaxSplitSize)
      Tries.push_back({"max_split_size_mb:" + std::to_string(MB), M});
  }
  for (auto &[Name, C] : Tries)
    A.Alternatives.push_back(
        {Name, simulateCachingAllocator(Events, C),
         simulateCachingAllocator(Events, C, A.LimitBytes)});
  return A;
}

static std::string pct(uint64_t Part, uint64_t Whole) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::format("%.1f%%", Whole ? 100.0 * Part / Whole : 0.0);
  return OS.str();
}

// One line per kind of library allocation: how many, how large.
static void printLibraries(llvm::raw_ostream &OS,
                           llvm::ArrayRef<LibraryAllocation> Libs) {
  std::vector<std::string> Kinds;
  for (const LibraryAllocation &L : Libs) {
    std::string K = L.What.substr(0, L.What.find(" ("));
    if (std::find(Kinds.begin(), Kinds.end(), K) == Kinds.end())
      Kinds.push_back(K);
  }
  for (const std::string &K : Kinds) {
    uint64_t N = 0, Largest = 0;
    bool Kept = false;
    for (const LibraryAllocation &L : Libs)
      if (L.What.compare(0, K.size(), K) == 0) {
        ++N;
        Largest = std::max(Largest, L.Bytes);
        Kept = L.Kept;
      }
    OS << "  library        " << K << ": " << N << " x "
       << (Kept ? "" : "up to ") << describeBytes(Largest)
       << (Kept ? ", kept from the first use" : ", freed after each kernel")
       << '\n';
  }
}

void report::printAllocatorText(llvm::raw_ostream &OS,
                                const AllocatorReport &A) {
  const AllocatorResult &U = A.Unlimited;
  OS << "caching allocator (--runtime=pytorch-cuda: PyTorch 2.x's "
        "CUDACachingAllocator rules, "
     << A.Iterations << " steps simulated"
     << (A.ConfigText.empty() ? std::string()
                              : ", PYTORCH_CUDA_ALLOC_CONF=" + A.ConfigText)
     << "):\n";
  OS << "  allocated      " << describeBytes(U.PeakAllocated)
     << "  torch.cuda.max_memory_allocated\n";
  OS << "  reserved       " << describeBytes(U.PeakReserved)
     << "  torch.cuda.max_memory_reserved, " << U.Segments << " segments\n";
  printLibraries(OS, A.Libraries);
  OS << "  fragmentation  " << describeBytes(A.fragmentation())
     << "  reserved - allocated, " << pct(A.fragmentation(), U.PeakReserved)
     << " of reserved\n";
  if (A.Limit.OverheadBytes)
    OS << "  device         "
       << describeBytes(neededBytes(A.Limit, Figures{U.PeakReserved, {}}))
       << "  reserved + overhead (nvidia-smi)\n";
  if (!A.UnderBudget)
    return;
  OS << "  under the budget, " << describeBytes(*A.LimitBytes)
     << " for the allocator: ";
  if (!A.outOfMemory()) {
    OS << "fits\n";
    return;
  }
  const AllocatorResult &B = *A.UnderBudget;
  OS << "OUT OF MEMORY at allocation " << (*B.OOMEvent + 1) << " of "
     << A.NumEvents << " events (" << formatBytes(A.OOMBytes)
     << " asked; allocated " << formatBytes(B.AllocatedAtOOM) << ", reserved "
     << formatBytes(B.ReservedAtOOM) << ")\n";
  for (const AllocatorAlternative &Alt : A.Alternatives)
    OS << "    with " << Alt.Setting << ": reserved "
       << formatBytes(Alt.Unlimited.PeakReserved) << ", "
       << (Alt.UnderBudget.OOMEvent ? "still out of memory" : "fits") << '\n';
  if (!A.fragmentationTipsOver())
    return;
  Finding F = fragmentationFinding(A);
  OS << "  diagnosis: " << causeName(F.Kind) << ": " << F.Summary << '\n';
  for (const std::string &E : F.Evidence)
    OS << "    " << E << '\n';
}

static void writeResult(llvm::json::OStream &J, const AllocatorResult &R) {
  J.attribute("allocated_bytes", R.PeakAllocated);
  J.attribute("reserved_bytes", R.PeakReserved);
  J.attribute("segments", R.Segments);
  if (R.OOMEvent)
    J.attribute("oom_event", uint64_t(*R.OOMEvent));
}

void report::writeAllocatorJSON(llvm::json::OStream &J,
                                const AllocatorReport &A) {
  J.objectBegin();
  if (A.ConfigText.empty())
    J.attribute("config", nullptr); // PyTorch's defaults
  else
    J.attribute("config", A.ConfigText);
  J.attribute("iterations", A.Iterations);
  J.attributeArray("libraries", [&] {
    for (const LibraryAllocation &L : A.Libraries)
      J.object([&] {
        J.attribute("what", L.What);
        J.attribute("step", L.Step);
        J.attribute("bytes", L.Bytes);
        J.attribute("kept", L.Kept);
      });
  });
  writeResult(J, A.Unlimited);
  J.attribute("fragmentation_bytes", A.fragmentation());
  if (A.UnderBudget) {
    J.attribute("limit_bytes", *A.LimitBytes);
    J.attribute("fits", !A.outOfMemory());
    J.attribute("fragmentation_tips_over", A.fragmentationTipsOver());
    if (A.fragmentationTipsOver())
      J.attribute("summary", fragmentationFinding(A).Summary);
    J.attributeArray("alternatives", [&] {
      for (const AllocatorAlternative &Alt : A.Alternatives)
        J.object([&] {
          J.attribute("setting", Alt.Setting);
          writeResult(J, Alt.Unlimited);
          J.attribute("fits", !Alt.UnderBudget.OOMEvent);
        });
    });
  }
  J.objectEnd();
}

Finding report::fragmentationFinding(const AllocatorReport &A) {
  Finding F;
  F.Kind = Cause::Fragmentation;
  std::string Fixes;
  for (const AllocatorAlternative &Alt : A.Alternatives)
    if (!Alt.UnderBudget.OOMEvent)
      Fixes += (Fixes.empty() ? "" : " or ") + Alt.Setting;
  F.Summary =
      "the tensors fit but PyTorch's caching allocator runs out: " +
      (Fixes.empty()
           ? std::string("no PYTORCH_CUDA_ALLOC_CONF setting tried "
                         "fits; free memory (the remedies below)")
           : "set PYTORCH_CUDA_ALLOC_CONF=" + Fixes + " (simulated: fits)");
  F.Evidence.push_back("allocated at most " +
                       describeBytes(A.Unlimited.PeakAllocated) +
                       " of the allocator's " + describeBytes(*A.LimitBytes) +
                       " (budget less overhead)");
  F.Evidence.push_back("a " + formatBytes(A.OOMBytes) +
                       " request finds no cached block large enough and no "
                       "room for a new segment: reserved " +
                       formatBytes(A.UnderBudget->ReservedAtOOM) +
                       " after releasing every free segment");
  return F;
}
