//===- StepShapesTest.cpp - operands checked before each kernel -*- C++ -*-===//
//
// The executor checks what a kernel will touch before calling it (its dims
// against the planned buffers, and the dims of broadcasting ops and
// products against each other). Planning refuses such dims already, so the
// tests give the executor run information that disagrees with the node, as
// a wrong formula would: the run must stop with an error naming the node
// and the tensor, never run the kernel on them.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestModel.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::unit;

namespace {

std::string runError(const char *Text, const char *Tensor,
                     llvm::SmallVector<int64_t, 6> Dims) {
  Model M(Text);
  Plan P = M.plan(M.schedule(cpu()));
  RunInfo I = M.info(P);
  // Same element count, so the buffer the plan gave it still holds it.
  I.Dims[M.G->findValue(Tensor)] = Dims;
  auto E = makeExec(M, P, I, cpu());
  llvm::Error Err = E->run();
  if (!Err)
    return "";
  return llvm::toString(std::move(Err));
}

// [2, 4] is 32 bytes like [1, 8], but does not broadcast to [1, 8]: the
// Add kernel would read a at offsets of another shape.
TEST(StepShapes, BroadcastInputThatDoesNotBroadcastToTheOutput) {
  std::string Msg = runError(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,8] a, float[1,8] b) => (float[1,8] y) {
  y = Add(a, b)
})",
                             "a", {2, 4});
  EXPECT_NE(Msg.find("node #0 (Add): input tensor 'a' [2,4] does not "
                     "broadcast to the output [1,8]"),
            std::string::npos)
      << Msg;
}

// b as [4, 3] (48 bytes like [3, 4]) contracts 4 with a's 3.
TEST(StepShapes, MatMulInnerDimsDiffer) {
  std::string Msg = runError(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] a, float[3,4] b) => (float[2,4] y) {
  y = MatMul(a, b)
})",
                             "b", {4, 3});
  EXPECT_NE(Msg.find("node #0 (MatMul): inner dims differ: tensor 'a' [2,3] "
                     "and tensor 'b' [4,3]"),
            std::string::npos)
      << Msg;
}

// Consistent dims run as before.
TEST(StepShapes, ConsistentDimsRun) {
  EXPECT_EQ(runError(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] a, float[1,4] b) => (float[2,4] y) {
  y = Add(a, b)
})",
                     "a", {2, 4}),
            "");
}

} // namespace
