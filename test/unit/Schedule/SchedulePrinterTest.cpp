//===- SchedulePrinterTest.cpp - one line per step, sizes by hand ---------===//
//
// The printed form of a default schedule built from a two-node model, and of
// a hand-made schedule with every mark (host-home tensors, a host step, a
// view, the in-place permission, steps without a node). Every byte count is
// from the shapes: float[2,8] is 2 x 8 x 4 = 64 bytes.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/SchedulePrinter.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Plan/Pipeline.h"
#include "gtest/gtest.h"

using namespace oomplan;

static std::string print(const Schedule &S, const Graph *G) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  printSchedule(OS, S, G);
  return OS.str();
}

// Relu may write in place; Identity is a view of its input. Nodes are
// unnamed in the text format, so they print as #<id>.
TEST(SchedulePrinter, DefaultSchedule) {
  auto G = importModelText("<ir_version: 8, opset_import: [\"\" : 17]>\n"
                           "g (float[2,8] x) => (float[2,8] y) {\n"
                           "  r = Relu(x)\n"
                           "  y = Identity(r)\n"
                           "}\n",
                           "g.onnxtxt");
  ASSERT_TRUE(!!G) << llvm::toString(G.takeError());
  auto Shapes = inferShapes(**G);
  ASSERT_TRUE(!!Shapes) << llvm::toString(Shapes.takeError());
  auto Bytes = evaluateValueBytes(**G, *Shapes, {});
  ASSERT_TRUE(!!Bytes) << llvm::toString(Bytes.takeError());
  (*G)->Nodes[0].Name = "relu0";
  Schedule S = makeDefaultSchedule(**G, *Bytes);
  EXPECT_EQ(print(S, G->get()),
            "0 compute Relu 'relu0': x:64 -> r:64 in-place\n"
            "1 compute Identity #1: r:64 -> y:64 view of r\n");
  // Without the graph, node ids.
  EXPECT_EQ(print(S, nullptr).substr(0, 20), "0 compute Relu #0: x");
}

TEST(SchedulePrinter, EveryMark) {
  Schedule S;
  auto Add = [&](const char *Name, uint64_t Bytes, bool Host) {
    ScheduleTensor T;
    T.Name = Name;
    T.SizeBytes = Bytes;
    T.HostHome = Host;
    S.Tensors.push_back(T);
  };
  Add("w", 1024, true);
  Add("g", 256, false);
  Add("m", 512, true);
  Step P;
  P.Kind = StepKind::Prefetch;
  P.Op = "Prefetch";
  P.Writes = {0};
  Step O;
  O.Kind = StepKind::Offload;
  O.Op = "Offload";
  O.Reads = {1};
  Step H;
  H.Kind = StepKind::Optimizer;
  H.Op = "HostAdam";
  H.Reads = {2};
  H.OnHost = true;
  Step E; // a step with no op name, no node and no tensors
  E.Kind = StepKind::Backward;
  S.Steps = {P, O, H, E};
  EXPECT_EQ(print(S, nullptr), "0 prefetch Prefetch -: - -> w:1024@host\n"
                               "1 offload Offload -: g:256 -> -\n"
                               "2 optimizer HostAdam -: m:512@host -> - "
                               "on-host\n"
                               "3 backward - -: - -> -\n");
}
