//===- LoaderTest.cpp - tensor files and seeded inputs ----------*- C++ -*-===//
//
// TensorProto files written and read back, typed-field initializers loaded
// at their exact bytes, and the random inputs' range for Gather indices.
//
//===----------------------------------------------------------------------===//
#include "TestExpected.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Frontend/WeightLoader.h"
#include "oomplan/Runtime/RandomInputs.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <cstring>
#include <map>

using namespace oomplan;

namespace {

std::string tempFile(const char *Suffix) {
  llvm::SmallString<128> P;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("loader", Suffix, P));
  return P.str().str();
}

TEST(TensorFile, WriteThenReadKeepsNameTypeDimsAndBytes) {
  std::string Path = tempFile("pb");
  int64_t Data[3] = {7, -1, 1LL << 40};
  ASSERT_FALSE(llvm::errorToBool(writeTensorFile(
      Path, "ids", ElementType::Int64, {3}, Data, sizeof(Data))));
  auto T = readTensorFile(Path);
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  EXPECT_EQ(T->Name, "ids");
  EXPECT_EQ(T->Type, ElementType::Int64);
  EXPECT_EQ(T->Dims, (std::vector<int64_t>{3}));
  ASSERT_EQ(T->Bytes.size(), sizeof(Data));
  EXPECT_EQ(std::memcmp(T->Bytes.data(), Data, sizeof(Data)), 0);
  llvm::sys::fs::remove(Path);
}

TEST(TensorFile, GarbageIsAnErrorNamingTheFile) {
  std::string Path = tempFile("pb");
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    OS << "\xff\xff\xff";
  }
  auto T = readTensorFile(Path);
  ASSERT_FALSE(T);
  EXPECT_NE(llvm::toString(T.takeError()).find(Path), std::string::npos);
  llvm::sys::fs::remove(Path);
}

// ONNX text stores initializers in the typed fields: int32_data holds the
// int8 and int16 values (written back at their own width, little-endian:
// -2 as int16 is FE FF), int64_data the int64 ones, and a Constant's
// value_ints becomes int64.
TEST(WeightLoader, TypedFieldsAndConstantsAtTheirBytes) {
  std::string Path = tempFile("onnxtxt");
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    OS << R"(<ir_version: 8, opset_import: ["" : 17]>
g (int8[3] x) => (int8[3] y, int64[2] z)
<int8[3] a = {-1, 2, 127}, int16[1] h = {-2}, int64[2] b = {5, -6}> {
  y = Add(x, a)
  k = Constant<value_ints = [9, 10]>()
  z = Add(b, k)
})";
  }
  auto G = importModelFile(Path);
  test::stopOnError(G, "import");
  std::map<std::string, std::string> Got;
  llvm::Error E = loadTensorData(**G, Path, [&](ValueId V, uint64_t Bytes) {
    std::string &S = Got[(*G)->Values[V].Name];
    S.resize(Bytes);
    return static_cast<void *>(S.data());
  });
  ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
  EXPECT_EQ(Got["a"], std::string("\xff\x02\x7f", 3));
  EXPECT_EQ(Got["h"], std::string("\xfe\xff", 2));
  int64_t B[2] = {5, -6}, K[2] = {9, 10};
  EXPECT_EQ(Got["b"], std::string(reinterpret_cast<char *>(B), 16));
  EXPECT_EQ(Got["k"], std::string(reinterpret_cast<char *>(K), 16));
  // A destination that refuses (a size mismatch) is an error naming it.
  llvm::Error R = loadTensorData(**G, Path, [](ValueId, uint64_t) {
    return static_cast<void *>(nullptr);
  });
  ASSERT_TRUE(bool(R));
  EXPECT_NE(llvm::toString(std::move(R)).find("initializer 'a'"),
            std::string::npos);
  llvm::sys::fs::remove(Path);
}

TEST(RandomInputs, GatherIndicesStayInTheGatheredAxis) {
  auto G = importModelText(R"(<ir_version: 8, opset_import: ["" : 17]>
g (int64[64] ids, int64[64] other) => (float[64,2] y, int64[64] z)
<float[5,2] emb = {0,1,2,3,4,5,6,7,8,9}> {
  y = Gather(emb, ids)
  z = Add(other, other)
})",
                           "gather.onnxtxt");
  test::stopOnError(G, "import");
  const Graph &Gr = **G;
  auto Dims = [&](ValueId V) {
    runtime::TensorRef R;
    for (const DeclaredDim &D : Gr.Values[V].Shape)
      R.Dims.push_back(D.Size);
    return R;
  };
  ValueId Ids = Gr.findValue("ids"), Other = Gr.findValue("other");
  EXPECT_EQ(runtime::integerInputBound(Gr, Ids, Dims), 5);
  EXPECT_EQ(runtime::integerInputBound(Gr, Other, Dims), 8);
  int64_t A[64], B[64];
  runtime::TensorRef T;
  T.Type = ElementType::Int64;
  T.Dims = {64};
  T.Data = A;
  runtime::fillRandom(T, 42, 0, 5);
  T.Data = B;
  runtime::fillRandom(T, 42, 0, 5);
  EXPECT_EQ(std::memcmp(A, B, sizeof(A)), 0); // same seed, same values
  bool SawZero = false, SawFour = false;
  for (int64_t V : A) {
    EXPECT_GE(V, 0);
    EXPECT_LT(V, 5);
    SawZero |= V == 0;
    SawFour |= V == 4;
  }
  EXPECT_TRUE(SawZero && SawFour); // 64 draws from 5 values reach both ends
}

} // namespace
