//===- SymExprTest.cpp - canonical form, printing and evaluation ----------===//
//
// Every expected value here was worked out by hand; the canonical-form tests
// build one quantity in several ways and require one printed form.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/SymExpr.h"
#include "gtest/gtest.h"
#include <map>
#include <unordered_set>

using namespace oomplan;

namespace {

const std::vector<std::string> Names = {"batch", "seq", "h"};

SymExpr C(int64_t V) { return SymExpr::constant(V); }
SymExpr batch() { return SymExpr::symbol(0); }
SymExpr seq() { return SymExpr::symbol(1); }
SymExpr h() { return SymExpr::symbol(2); }

std::string S(const SymExpr &E) { return E.str(Names); }

int64_t eval(const SymExpr &E, std::optional<int64_t> B,
             std::optional<int64_t> Q, std::optional<int64_t> H = 0) {
  std::vector<std::optional<int64_t>> Bind = {B, Q, H};
  llvm::Expected<int64_t> V = E.evaluate(Bind, Names);
  if (!V) {
    ADD_FAILURE() << llvm::toString(V.takeError());
    return -12345;
  }
  return *V;
}

std::string evalError(const SymExpr &E, std::optional<int64_t> B,
                      std::optional<int64_t> Q) {
  std::vector<std::optional<int64_t>> Bind = {B, Q, 0};
  llvm::Expected<int64_t> V = E.evaluate(Bind, Names);
  if (V)
    return "no error, value " + std::to_string(*V);
  return llvm::toString(V.takeError());
}

TEST(SymExprTest, DefaultIsZero) {
  SymExpr Z;
  EXPECT_TRUE(Z.isConstant());
  EXPECT_EQ(Z.getConstant(), 0);
  EXPECT_EQ(S(Z), "0");
  EXPECT_EQ(Z, C(0));
  EXPECT_EQ(seq() - seq(), Z);
}

TEST(SymExprTest, CanonicalProductsPrintTheSame) {
  SymExpr A = C(2) * batch() * seq();
  SymExpr B = seq() * (batch() + batch());
  SymExpr D = (seq() * C(3) - seq()) * batch();
  EXPECT_EQ(A, B);
  EXPECT_EQ(A, D);
  EXPECT_EQ(A.hash(), B.hash());
  EXPECT_EQ(S(A), "2*batch*seq");
  EXPECT_EQ(S(D), "2*batch*seq");
  EXPECT_FALSE(A < B);
  EXPECT_FALSE(B < A);
}

TEST(SymExprTest, PolynomialPrintOrder) {
  // (batch*seq + 1) * (seq - 1) = batch*seq^2 - batch*seq + seq - 1.
  SymExpr E = (batch() * seq() + C(1)) * (seq() - C(1));
  EXPECT_EQ(S(E), "batch*seq^2 - batch*seq + seq - 1");
  EXPECT_EQ(S(C(12) * batch() * seq() * seq()), "12*batch*seq^2");
  EXPECT_EQ(S(-seq() + C(4)), "-seq + 4");
  EXPECT_EQ(S(C(-7)), "-7");
  EXPECT_EQ(eval(E, 2, 5), 2 * 25 - 10 + 5 - 1);
}

TEST(SymExprTest, ConstantsFold) {
  EXPECT_EQ((C(6) * C(7)).getConstant(), 42);
  EXPECT_EQ((C(6) - C(7)).getConstant(), -1);
  EXPECT_EQ(SymExpr::floorDiv(C(7), C(2)).getConstant(), 3);
  EXPECT_EQ(SymExpr::ceilDiv(C(7), C(2)).getConstant(), 4);
  EXPECT_EQ(SymExpr::mod(C(7), C(3)).getConstant(), 1);
  EXPECT_EQ(SymExpr::min(C(7), C(3)).getConstant(), 3);
  EXPECT_EQ(SymExpr::max(C(7), C(3)).getConstant(), 7);
  EXPECT_FALSE(seq().isConstant());
  EXPECT_EQ(seq().getSymbol(), 1u);
  EXPECT_FALSE((C(2) * seq()).getSymbol());
}

TEST(SymExprTest, FloorSemanticsForNegatives) {
  // Python: -7 // 2 == -4, -7 % 2 == 1, 7 // -2 == -4, 7 % -2 == -1.
  EXPECT_EQ(SymExpr::floorDiv(C(-7), C(2)).getConstant(), -4);
  EXPECT_EQ(SymExpr::mod(C(-7), C(2)).getConstant(), 1);
  EXPECT_EQ(SymExpr::floorDiv(C(7), C(-2)).getConstant(), -4);
  EXPECT_EQ(SymExpr::mod(C(7), C(-2)).getConstant(), -1);
  EXPECT_EQ(SymExpr::ceilDiv(C(-7), C(2)).getConstant(), -3);
  EXPECT_EQ(SymExpr::floorDiv(C(-8), C(2)).getConstant(), -4);
  // The same through evaluation of symbolic terms: seq = 7.
  SymExpr F = SymExpr::floorDiv(-seq(), C(2));
  EXPECT_EQ(eval(F, 0, 7), -4);
  EXPECT_EQ(eval(SymExpr::mod(-seq(), C(2)), 0, 7), 1);
  EXPECT_EQ(eval(SymExpr::floorDiv(C(-7), seq()), 0, 2), -4);
  EXPECT_EQ(eval(SymExpr::mod(C(-7), seq()), 0, 2), 1);
  EXPECT_EQ(eval(SymExpr::ceilDiv(C(-7), seq()), 0, 2), -3);
}

TEST(SymExprTest, DivisionByConstantSimplifies) {
  // Every coefficient divisible: exact.
  EXPECT_EQ(SymExpr::floorDiv(C(4) * seq() + C(8), C(4)), seq() + C(2));
  // Multiples pulled out: floor((4*seq + 3)/2) = 2*seq + 1.
  EXPECT_EQ(SymExpr::floorDiv(C(4) * seq() + C(3), C(2)), C(2) * seq() + C(1));
  // Remainder kept: floor((seq - 1)/2) = floor((seq + 1)/2) - 1.
  SymExpr Conv = SymExpr::floorDiv(seq() - C(1), C(2));
  EXPECT_EQ(S(Conv), "floor((seq + 1)/2) - 1");
  for (int64_t Q : {1, 2, 3, 10, 11})
    EXPECT_EQ(eval(Conv, 0, Q), (Q - 1) / 2) << Q;
  // Nested floors by constants merge: floor(floor((seq+1)/2)/2).
  EXPECT_EQ(SymExpr::floorDiv(SymExpr::floorDiv(seq() + C(1), C(2)), C(2)),
            SymExpr::floorDiv(seq() + C(1), C(4)));
  EXPECT_EQ(S(SymExpr::floorDiv(SymExpr::floorDiv(seq(), C(2)) - C(1), C(3))),
            "floor((seq + 4)/6) - 1");
  // ceil and floor spellings agree.
  EXPECT_EQ(SymExpr::ceilDiv(seq(), C(2)),
            SymExpr::floorDiv(seq() + C(1), C(2)));
  EXPECT_EQ(S(SymExpr::ceilDiv(seq(), C(2))), "floor((seq + 1)/2)");
  // A common factor of numerator and divisor cancels.
  EXPECT_EQ(SymExpr::floorDiv(C(2) * seq() + C(2), C(4)),
            SymExpr::floorDiv(seq() + C(1), C(2)));
  // By 1 and by -1.
  EXPECT_EQ(SymExpr::floorDiv(seq(), C(1)), seq());
  EXPECT_EQ(SymExpr::floorDiv(seq(), C(-1)), -seq());
  // A numerator known to lie in [0, 4) divides to 0.
  EXPECT_EQ(SymExpr::floorDiv(SymExpr::mod(seq(), C(4)), C(4)), C(0));
}

TEST(SymExprTest, DivisionBySymbol) {
  EXPECT_EQ(SymExpr::floorDiv(seq(), seq()), C(1));
  EXPECT_EQ(SymExpr::floorDiv(C(6) * batch() * seq(), C(3) * seq()),
            C(2) * batch());
  SymExpr T = SymExpr::floorDiv(C(1024), seq());
  EXPECT_EQ(S(T), "floor(1024/seq)");
  EXPECT_EQ(eval(T, 0, 3), 341);
  EXPECT_EQ(S(SymExpr::floorDiv(batch(), C(2) * seq())),
            "floor(batch/(2*seq))");
  EXPECT_EQ(SymExpr::mod(C(4) * seq(), seq()), C(0));
}

TEST(SymExprTest, ModSimplifies) {
  EXPECT_EQ(SymExpr::mod(C(4) * seq() + C(5), C(2)), C(1));
  EXPECT_EQ(SymExpr::mod(C(2) * seq(), C(4)), C(2) * SymExpr::mod(seq(), C(2)));
  EXPECT_EQ(S(SymExpr::mod(seq(), C(8))), "mod(seq, 8)");
  EXPECT_EQ(eval(SymExpr::mod(seq() + C(3), C(8)), 0, 13), 0);
  EXPECT_EQ(SymExpr::mod(seq(), C(1)), C(0));
}

TEST(SymExprTest, MinMax) {
  EXPECT_EQ(SymExpr::min(seq(), seq()), seq());
  EXPECT_EQ(SymExpr::min(seq(), seq() + C(1)), seq());
  EXPECT_EQ(SymExpr::max(seq(), seq() + C(1)), seq() + C(1));
  // Symbols are dims in [0, 2^48]: INT64_MAX never wins a min.
  EXPECT_EQ(SymExpr::min(seq(), C(INT64_MAX)), seq());
  EXPECT_EQ(SymExpr::max(seq(), C(0)), seq());
  EXPECT_EQ(SymExpr::min(C(2) * seq(), seq()), seq());
  SymExpr M = SymExpr::min(seq(), C(512));
  EXPECT_EQ(M, SymExpr::min(C(512), seq()));
  EXPECT_EQ(S(M), "min(seq, 512)");
  EXPECT_EQ(eval(M, 0, 1000), 512);
  EXPECT_EQ(eval(M, 0, 100), 100);
  // Nested mins flatten and sort.
  SymExpr N1 = SymExpr::min(SymExpr::min(batch(), seq()), C(7));
  SymExpr N2 = SymExpr::min(C(7), SymExpr::min(seq(), batch()));
  EXPECT_EQ(N1, N2);
  EXPECT_EQ(S(N1), "min(batch, seq, 7)");
  EXPECT_EQ(SymExpr::min(N1, batch()), N1);
  EXPECT_EQ(S(SymExpr::max(batch(), seq())), "max(batch, seq)");
}

TEST(SymExprTest, Evaluate) {
  SymExpr Bytes = C(4) * batch() * C(12) * seq() * seq();
  EXPECT_EQ(S(Bytes), "48*batch*seq^2");
  EXPECT_EQ(eval(Bytes, 32, 2048), int64_t(48) * 32 * 2048 * 2048);
  EXPECT_EQ(eval(SymExpr::floorDiv(seq() + C(1), C(2)) + C(1), 0, 224), 113);
}

TEST(SymExprTest, EvaluateErrors) {
  EXPECT_EQ(evalError(seq() + batch(), 1, std::nullopt),
            "symbol 'seq' is not bound (evaluating batch + seq)");
  EXPECT_EQ(evalError(SymExpr::floorDiv(batch(), seq() - C(1)), 4, 1),
            "division by zero evaluating floor(batch/(seq - 1))");
  EXPECT_EQ(evalError(SymExpr::mod(batch(), seq() - C(1)), 4, 1),
            "division by zero evaluating mod(batch, seq - 1)");
  EXPECT_EQ(evalError(C(INT64_MAX / 2 + 1) * batch(), 2, 1),
            "integer overflow evaluating 4611686018427387904*batch");
  EXPECT_EQ(evalError(batch(), 0, 0),
            "symbol 'batch' is bound to 0, outside [1, 2^48]");
}

TEST(SymExprTest, ConstantOverflowPoisons) {
  SymExpr Big = C(INT64_MAX);
  SymExpr P = Big + C(1);
  EXPECT_TRUE(P.isPoisoned());
  EXPECT_FALSE(P.isConstant());
  EXPECT_FALSE(P.getConstant());
  EXPECT_EQ(S(P), "<overflow>");
  EXPECT_TRUE((P * seq() + C(1)).isPoisoned());
  EXPECT_TRUE((Big * C(2)).isPoisoned());
  EXPECT_TRUE((-C(INT64_MIN)).isPoisoned());
  EXPECT_TRUE(SymExpr::floorDiv(seq(), C(INT64_MIN)).isPoisoned());
  EXPECT_EQ(evalError(P, 1, 1),
            "integer overflow while building a size expression");
  EXPECT_NE(P, Big);
}

TEST(SymExprTest, CollectSymbolsAndSubstitute) {
  SymExpr E = batch() * SymExpr::floorDiv(seq(), C(2)) + batch();
  llvm::SmallVector<SymbolId, 4> Syms;
  E.collectSymbols(Syms);
  ASSERT_EQ(Syms.size(), 2u);
  EXPECT_EQ(Syms[0], 0u);
  EXPECT_EQ(Syms[1], 1u);
  std::vector<std::optional<SymExpr>> Map = {std::nullopt, C(2) * h()};
  EXPECT_EQ(E.substitute(Map), batch() * h() + batch());
}

TEST(SymExprTest, UsableAsKeys) {
  std::map<SymExpr, int> M;
  M[C(2) * seq()] = 1;
  M[seq() + seq()] += 1;
  M[seq()] = 5;
  EXPECT_EQ(M.size(), 2u);
  EXPECT_EQ(M[C(2) * seq()], 2);
  std::unordered_set<SymExpr> U = {seq() * batch(), batch() * seq(), C(0),
                                   SymExpr()};
  EXPECT_EQ(U.size(), 2u);
}

TEST(SymExprTest, Bounds) {
  // Symbols are dims in [1, 2^48].
  EXPECT_TRUE(seq().isKnownPositive());
  EXPECT_TRUE((seq() - C(1)).isKnownNonNegative());
  EXPECT_FALSE((seq() - C(1)).isKnownPositive());
  EXPECT_EQ(SymExpr::max(seq() - C(1), C(0)), seq() - C(1));
  EXPECT_EQ(SymExpr::min(seq(), C(1)), C(1));
  EXPECT_EQ(SymExpr::mod(seq(), C(8)).upperBound(), 7);
  EXPECT_EQ(SymExpr::min(seq(), C(512)).upperBound(), 512);
  EXPECT_EQ(seq().upperBound(), SymbolMaxValue);
}

} // namespace
