//===- ArenaShadowTest.cpp - arena bytes poisoned under ASan ----*- C++ -*-===//
//
// In an AddressSanitizer build (OOMPLAN_SANITIZE=ON, or the fuzz build) the
// executor poisons every region byte no live buffer owns (ArenaShadow.h):
// these tests ask the sanitizer which bytes are poisoned while a kernel
// runs and after the run, and check that a kernel reading one element past
// its input is reported. Without the sanitizer there is nothing to observe:
// each test skips, naming the build that runs it.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestModel.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOMPLAN_TEST_ASAN 1
#endif
#endif
#if !defined(OOMPLAN_TEST_ASAN) && defined(__SANITIZE_ADDRESS__)
#define OOMPLAN_TEST_ASAN 1
#endif
#ifdef OOMPLAN_TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::unit;

namespace {

#ifdef OOMPLAN_TEST_ASAN
#define SKIP_WITHOUT_ASAN()
bool poisoned(const void *P) { return __asan_address_is_poisoned(P); }
#else
#define SKIP_WITHOUT_ASAN()                                                    \
  GTEST_SKIP() << "needs an AddressSanitizer build (-DOOMPLAN_SANITIZE=ON)"
bool poisoned(const void *) { return false; }
#endif

// What the Sub kernel (step 3 of Chain) saw of the sanitizer's shadow.
struct Seen {
  bool Ran = false;
  bool InputsAlive = true, OutputAlive = true;
  bool PastInputPoisoned = false, DeadBufferPoisoned = false;
};
Seen SubSaw;
const char *DeadB = nullptr; // b's bytes, dead once step 2 is done

// Sub as the CPU computes it, first asking which bytes are alive: its
// operands c and a (the arena) and its output y (IO); the byte after a's
// 16 (alignment padding, owned by no buffer); b, read last by step 2.
llvm::Error subLookingAtShadow(const KernelContext &C) {
  SubSaw.Ran = true;
  for (const TensorRef &R : C.Inputs)
    for (uint64_t I = 0; I < R.bytes(); ++I)
      SubSaw.InputsAlive &= !poisoned(R.data<char>() + I);
  for (uint64_t I = 0; I < C.Outputs[0].bytes(); ++I)
    SubSaw.OutputAlive &= !poisoned(C.Outputs[0].data<char>() + I);
  SubSaw.PastInputPoisoned =
      poisoned(C.Inputs[1].data<char>() + C.Inputs[1].bytes());
  SubSaw.DeadBufferPoisoned = DeadB && poisoned(DeadB);
  const float *L = C.Inputs[0].data<float>(), *Rt = C.Inputs[1].data<float>();
  for (uint64_t I = 0; I < C.Outputs[0].numElements(); ++I)
    C.Outputs[0].data<float>()[I] = L[I] - Rt[I];
  return llvm::Error::success();
}

// Chain's buffers, no in-place writes: a (steps 0-3), b (1-2) and c (2-3)
// in the arena, x and y in the IO region. While step 3 runs, a and c are
// alive and b is dead; after the run only a lives on (it is read by the
// last step, so the caller may read it) and x stays writable.
TEST(ArenaShadow, OnlyLiveBuffersAreAddressable) {
  SKIP_WITHOUT_ASAN();
  Model M(Chain);
  KernelTable K = cpu();
  K.set(ops::opCode(*ops::lookupOp("Sub")),
        Kernel{&subLookingAtShadow, nullptr, {}});
  Plan P = M.plan(M.schedule(K), /*InPlace=*/false);
  RunInfo I = M.info(P);
  auto E = makeExec(M, P, I, K);
  TensorId A = M.G->findValue("a"), B = M.G->findValue("b");
  BufferId BA = P.Life.BufferOf[A], BB = P.Life.BufferOf[B];
  ASSERT_EQ(P.RegionOf[BA], Region::Arena);
  ASSERT_EQ(P.RegionOf[BB], Region::Arena);
  ASSERT_NE(BA, BB);
  // The arena's base from a's address (a lives to the end: tensor() may
  // show it without making any other byte addressable).
  char *Arena = static_cast<char *>(E->tensor(A).Data) - P.OffsetOf[BA];
  DeadB = Arena + P.OffsetOf[BB];
  // Before the run b, written by step 1, is not alive yet.
  EXPECT_TRUE(poisoned(DeadB));
  setFloats(*E, M.G->findValue("x"), {1, -2, 3, -4});
  SubSaw = Seen();
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  ASSERT_TRUE(SubSaw.Ran);
  EXPECT_TRUE(SubSaw.InputsAlive);
  EXPECT_TRUE(SubSaw.OutputAlive);
  EXPECT_TRUE(SubSaw.PastInputPoisoned);
  EXPECT_TRUE(SubSaw.DeadBufferPoisoned);
  EXPECT_EQ(floats(*E, M.G->findValue("y")), (std::vector<float>{1, 2, 3, 4}));
  // After the run: b stays dead, a (to the last step) is alive, and the
  // byte after a's 16 is still padding.
  EXPECT_TRUE(poisoned(DeadB));
  EXPECT_FALSE(poisoned(Arena + P.OffsetOf[BA]));
  EXPECT_TRUE(poisoned(Arena + P.OffsetOf[BA] + 16));
  // A second run sees the same shadow.
  SubSaw = Seen();
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_TRUE(SubSaw.InputsAlive && SubSaw.DeadBufferPoisoned);
  DeadB = nullptr;
}

// Relu reading one float past its input: a's 16 bytes are followed by
// arena bytes of the same allocation, so without poisoning the sanitizer
// would see nothing.
llvm::Error reluReadingPastItsInput(const KernelContext &C) {
  const float *In = C.Inputs[0].data<float>();
  uint64_t N = C.Inputs[0].numElements();
  volatile float Past = In[N];
  (void)Past;
  for (uint64_t I = 0; I < N; ++I)
    C.Outputs[0].data<float>()[I] = std::max(0.0f, In[I]);
  return llvm::Error::success();
}

void runChainWithOverreadingRelu() {
  Model M(Chain);
  KernelTable K = cpu();
  K.set(ops::opCode(*ops::lookupOp("Relu")),
        Kernel{&reluReadingPastItsInput, nullptr, {}});
  Plan P = M.plan(M.schedule(K));
  RunInfo I = M.info(P);
  auto E = makeExec(M, P, I, K);
  setFloats(*E, M.G->findValue("x"), {1, -2, 3, -4});
  (void)E->run();
}

TEST(ArenaShadowDeathTest, OverreadInsideTheArenaIsReported) {
  SKIP_WITHOUT_ASAN();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(runChainWithOverreadingRelu(),
               "AddressSanitizer: use-after-poison");
}

} // namespace
