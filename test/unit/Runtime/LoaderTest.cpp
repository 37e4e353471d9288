//===- LoaderTest.cpp - tensor files and seeded inputs ----------*- C++ -*-===//
//
// TensorProto files written and read back, typed-field initializers loaded
// at their exact bytes, a binary model streamed and referenced in place,
// and the random inputs' range for Gather indices.
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

// A minimal protobuf writer, so that a binary model is built by hand here
// (field numbers of onnx.proto) without ONNX's headers.
struct Proto {
  std::string B;
  Proto &varint(uint64_t V) {
    do {
      uint8_t X = V & 0x7F;
      V >>= 7;
      B.push_back(char(V ? X | 0x80 : X));
    } while (V);
    return *this;
  }
  Proto &num(int F, uint64_t V) { return varint(uint64_t(F) << 3).varint(V); }
  Proto &bytes(int F, const std::string &S) {
    varint(uint64_t(F) << 3 | 2).varint(S.size());
    B += S;
    return *this;
  }
  Proto &msg(int F, const Proto &P) { return bytes(F, P.B); }
};

// ValueInfoProto of a 1-D tensor.
Proto valueInfo(const char *Name, int ElemType, int64_t Dim) {
  Proto D, Shape, Tensor, Type, VI;
  D.num(1, uint64_t(Dim));
  Shape.msg(1, D);
  Tensor.num(1, uint64_t(ElemType)).msg(2, Shape);
  Type.msg(1, Tensor);
  return VI.bytes(1, Name).msg(2, Type);
}

// y = Add(x, w) with w 3000 floats (12,000 bytes of raw_data: more than
// the 8 KiB under which a tensor stays inline) and t = Mul(s, s) with s two
// int64 values (16 bytes).
std::string binaryModel(std::vector<float> &W, int64_t S[2]) {
  W.resize(3000);
  for (size_t I = 0; I < W.size(); ++I)
    W[I] = float(I) * 0.5f - 7.0f;
  S[0] = -3;
  S[1] = 1LL << 40;
  Proto Add, Mul, InitW, InitS, G, Op, M;
  Add.bytes(1, "x").bytes(1, "w").bytes(2, "y").bytes(4, "Add");
  Mul.bytes(1, "s").bytes(1, "s").bytes(2, "t").bytes(4, "Mul");
  InitW.num(1, 3000).num(2, 1).bytes(8, "w").bytes(
      9, std::string(reinterpret_cast<char *>(W.data()), W.size() * 4));
  InitS.num(1, 2).num(2, 7).bytes(8, "s").bytes(
      9, std::string(reinterpret_cast<char *>(S), 16));
  G.msg(1, Add).msg(1, Mul).bytes(2, "g").msg(5, InitW).msg(5, InitS);
  G.msg(11, valueInfo("x", 1, 3000));
  G.msg(12, valueInfo("y", 1, 3000)).msg(12, valueInfo("t", 7, 2));
  Op.num(2, 17);
  M.num(1, 8).msg(7, G).msg(8, Op);
  return M.B;
}

// The streaming loader reads a binary model's raw_data straight into the
// destinations, and the model with its large initializers referenced in
// place plans (imports) and loads to the same bytes.
TEST(WeightLoader, BinaryModelStreamsAndReferencesInPlace) {
  std::string Path = tempFile("onnx");
  std::vector<float> W;
  int64_t S[2];
  std::string Model = binaryModel(W, S);
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    OS << Model;
  }
  auto Load = [&](const Graph &G, std::optional<llvm::StringRef> Bytes) {
    std::map<std::string, std::string> Got;
    llvm::Error E = loadTensorData(
        G, Path,
        [&](ValueId V, uint64_t N) {
          std::string &Slot = Got[G.Values[V].Name];
          Slot.resize(N);
          return static_cast<void *>(Slot.data());
        },
        Bytes);
    EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
    return Got;
  };
  const std::string WantW(reinterpret_cast<char *>(W.data()), 12000),
      WantS(reinterpret_cast<char *>(S), 16);
  auto G = importModelFile(Path);
  test::stopOnError(G, "import");
  auto Got = Load(**G, std::nullopt);
  EXPECT_EQ(Got["w"], WantW);
  EXPECT_EQ(Got["s"], WantS);

  auto Small = referenceWeightsInPlace(Path);
  test::stopOnError(Small, "reference");
  ASSERT_TRUE(Small->has_value());
  // w's 12,000 bytes are now a reference; s's 16 stay inline.
  EXPECT_LT((*Small)->size(), Model.size() - 11000);
  auto H = importModelBinary(**Small, Path);
  test::stopOnError(H, "import referenced");
  Got = Load(**H, llvm::StringRef(**Small));
  EXPECT_EQ(Got["w"], WantW);
  EXPECT_EQ(Got["s"], WantS);

  // A truncated model is an error naming the file, not a crash.
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    OS << Model.substr(0, Model.size() - 5000);
  }
  llvm::Error E = loadTensorData(**G, Path, [&](ValueId, uint64_t N) {
    static std::string Sink;
    Sink.resize(N);
    return static_cast<void *>(Sink.data());
  });
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find(Path), std::string::npos);
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
