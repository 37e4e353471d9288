//===- NewerOpsetsTest.cpp - the op versions past ONNX 1.12's schemas -----===//
//
// The table (lib/Frontend/ONNX/NewerOpsets.cpp) against the schemas it
// stands in for: a row that keeps 1.12's arity must have a 1.12 schema to
// take it from, the versions must be past 17 and in order, and every op
// the frontend accepts must be one the planner knows.
//
//===----------------------------------------------------------------------===//
#include "../../../lib/Frontend/ONNX/NewerOpsets.h"
#include "../../../lib/Frontend/ONNX/ContribOps.h"
#include "onnx/defs/schema.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/IR/OpTable.h"
#include "gtest/gtest.h"
#include <string>

using namespace oomplan;

TEST(NewerOpsets, RowsArePastSeventeenAndInOrder) {
  llvm::ArrayRef<NewerOpVersion> Rows = newerOpVersions();
  ASSERT_GT(Rows.size(), 100u);
  for (size_t I = 0; I < Rows.size(); ++I) {
    const NewerOpVersion &R = Rows[I];
    EXPECT_GT(R.Since, 17) << R.Op;
    EXPECT_LE(R.Since, MaxSupportedOpset) << R.Op;
    if (I > 0) {
      int Order = std::string(Rows[I - 1].Op).compare(R.Op);
      EXPECT_TRUE(Order < 0 || (Order == 0 && Rows[I - 1].Since < R.Since))
          << Rows[I - 1].Op << "-" << Rows[I - 1].Since << " before " << R.Op
          << "-" << R.Since;
    }
  }
}

TEST(NewerOpsets, SameArityRowsHaveASchemaAndNewOpsDoNot) {
  for (const NewerOpVersion &R : newerOpVersions()) {
    const onnx::OpSchema *Old = onnx::OpSchemaRegistry::Schema(R.Op, 17, "");
    if (R.MinIn == -1) {
      // Types or attributes only: 1.12's schema gives the arity.
      EXPECT_NE(Old, nullptr) << R.Op << "-" << R.Since;
      EXPECT_EQ(R.MaxIn, -1) << R.Op;
      continue;
    }
    EXPECT_LE(R.MinIn, R.MaxIn) << R.Op;
    EXPECT_LE(R.MinOut, R.MaxOut) << R.Op;
    // A row with its own arity is for an op 1.12 lacks or whose inputs
    // changed; for the latter the new arity must differ from 1.12's.
    if (Old && Old->max_input() == R.MaxIn && Old->min_input() == R.MinIn &&
        Old->max_output() == R.MaxOut)
      ADD_FAILURE() << R.Op << "-" << R.Since
                    << " repeats 1.12's arity: write -1";
  }
  // The ones this table exists for.
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Gelu", 22, ""), nullptr);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("CenterCropPad", 22, ""), nullptr);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("ReduceMean", 22, "")->max_input(),
            1);
}

TEST(NewerOpsets, VersionInForceAtAnOpset) {
  EXPECT_EQ(newerOpVersion("ReduceMean", 17), nullptr);
  ASSERT_NE(newerOpVersion("ReduceMean", 18), nullptr);
  EXPECT_EQ(newerOpVersion("ReduceMean", 22)->Since, 18);
  EXPECT_EQ(newerOpVersion("ReduceMax", 19)->Since, 18);
  EXPECT_EQ(newerOpVersion("ReduceMax", 21)->Since, 20);
  EXPECT_EQ(newerOpVersion("GroupNormalization", 20)->Since, 18);
  EXPECT_EQ(newerOpVersion("GroupNormalization", 21)->Since, 21);
  EXPECT_EQ(newerOpVersion("Gelu", 19), nullptr);
  EXPECT_EQ(newerOpVersion("Relu", 22), nullptr);
  EXPECT_NE(newerOpVersion("StringSplit", 20)->Refused, nullptr);
}

TEST(NewerOpsets, AcceptedOpsAreKnownToThePlanner) {
  for (const NewerOpVersion &R : newerOpVersions()) {
    llvm::StringRef Op = R.Op;
    // The importer unrolls these itself, resolves sequences, and imports
    // function ops as their bodies.
    if (R.Refused || R.Function || Op == "If" || Op == "Loop" || Op == "Scan" ||
        Op == "SplitToSequence")
      continue;
    EXPECT_NE(ops::lookupOp(Op), nullptr) << R.Op << "-" << R.Since;
  }
}

// A function op is never a node of the graph: no OpTable record may shadow
// its body, and its row gives its own arity (1.12 has no schema for it).
TEST(NewerOpsets, FunctionOpsAreImportedAsBodies) {
  unsigned Functions = 0;
  for (const NewerOpVersion &R : newerOpVersions()) {
    if (!R.Function)
      continue;
    ++Functions;
    EXPECT_EQ(ops::lookupOp(R.Op), nullptr) << R.Op;
    EXPECT_NE(R.MinIn, -1) << R.Op << "-" << R.Since;
    EXPECT_EQ(R.Refused, nullptr) << R.Op;
  }
  EXPECT_EQ(Functions, 6u); // Attention 23 to 25, RMSNormalization,
                            // RotaryEmbedding, Swish
  EXPECT_EQ(newerOpVersion("Attention", 24)->MaxIn, 7);
  EXPECT_EQ(newerOpVersion("Attention", 23)->MaxIn, 6);
  EXPECT_EQ(newerOpVersion("Attention", 25)->Since, 25);
  EXPECT_EQ(newerOpVersion("Swish", 23), nullptr);
  EXPECT_FALSE(newerOpVersion("TensorScatter", 24)->Function);
}

// ONNX Runtime's contrib ops (ContribOps.cpp): sorted and unique; those
// with a node of their own have an OpTable record (shape rule, kernels),
// the rest are bodies; only SimplifiedLayerNormalization is read in the
// default domain, where ONNX has no op of that name.
TEST(ContribOps, RowsAreSortedAndEveryNodeOpIsKnown) {
  llvm::ArrayRef<NewerOpVersion> Rows = contribOps();
  ASSERT_GE(Rows.size(), 15u);
  unsigned Nodes = 0;
  for (size_t I = 0; I < Rows.size(); ++I) {
    const NewerOpVersion &R = Rows[I];
    if (I > 0) {
      EXPECT_LT(std::string(Rows[I - 1].Op), std::string(R.Op));
    }
    EXPECT_EQ(R.Since, 1) << R.Op;
    EXPECT_EQ(R.Refused, nullptr) << R.Op;
    EXPECT_LE(1, R.MinIn) << R.Op;
    EXPECT_LE(R.MinIn, R.MaxIn) << R.Op;
    EXPECT_LE(R.MinOut, R.MaxOut) << R.Op;
    EXPECT_EQ(contribOp(ContribDomain, R.Op), &R) << R.Op;
    if (R.Function)
      continue;
    ++Nodes;
    const ops::OpInfo *Info = ops::lookupOp(R.Op);
    ASSERT_NE(Info, nullptr) << R.Op;
    EXPECT_NE(Info->Shape, ops::ShapeRuleId::Declared) << R.Op;
  }
  EXPECT_EQ(Nodes, 3u); // GatherBlockQuantized, GroupQueryAttention,
                        // MatMulNBits
  EXPECT_NE(contribOp("", "SimplifiedLayerNormalization"), nullptr);
  EXPECT_EQ(contribOp("", "MatMulNBits"), nullptr);
  EXPECT_EQ(contribOp("com.example", "MatMulNBits"), nullptr);
  EXPECT_EQ(contribOp(ContribDomain, "QAttention"), nullptr);
  EXPECT_NE(contribOpNames().find("MatMulNBits"), std::string::npos);
  // ONNX 1.12 has no schema for any of them: the table is the only reader.
  for (const NewerOpVersion &R : Rows)
    EXPECT_EQ(onnx::OpSchemaRegistry::Schema(R.Op, 1, ContribDomain), nullptr)
        << R.Op;
}
