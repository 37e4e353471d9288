//===- WeightLoader.cpp - tensor bytes for the runtime --------------------===//
//
// Re-reads a model file for the bytes the importer dropped, and reads and
// writes TensorProto .pb files. A binary model is read one initializer at a
// time from the mapped file (streamModel): raw_data goes straight from the
// file's pages into the caller's memory, whose pages are then dropped, so
// loading holds no second copy of the weights (parsing the whole
// ModelProto would copy every raw_data into a string first). One conversion,
// tensorBytes, turns any TensorProto (raw_data, typed field or external file)
// into packed little-endian bytes of exactly the size its dims and type need;
// anything else (short data, a location outside the model's folder, strings) is
// an error naming the tensor. Protobuf and ONNX may throw: every entry point
// catches and converts, as the importer does.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Frontend/WeightLoader.h"
#include "ConvertProto.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "onnx/defs/parser.h"
#include "oomplan/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include <climits>
#include <cstring>
#include <sys/mman.h>

using namespace oomplan;

// Copies a typed field into Dst, converting each value to the element's
// width. Count checked by the caller.
template <typename To, typename Field>
static void copyField(const Field &F, void *Dst) {
  To *Out = static_cast<To *>(Dst);
  int I = 0;
  for (auto V : F)
    Out[I++] = static_cast<To>(V);
}

static llvm::Error typedBytes(const onnx::TensorProto &T, ElementType Type,
                              uint64_t N, void *Dst, const std::string &What) {
  auto Need = [&](int Have, uint64_t PerElement) -> llvm::Error {
    if (uint64_t(Have) != N * PerElement)
      return makeInputError(What + " holds " + llvm::Twine(Have) +
                            " values; its dims need " +
                            llvm::Twine(N * PerElement));
    return llvm::Error::success();
  };
  switch (Type) {
  case ElementType::UInt4:
  case ElementType::Int4: {
    // int32_data holds them packed, one packed byte (two values) an entry
    // (ONNX).
    const uint64_t Bytes = (N + 1) / 2;
    if (uint64_t(T.int32_data_size()) != Bytes)
      return makeInputError(
          What + " holds " + llvm::Twine(T.int32_data_size()) +
          " packed bytes; its dims need " + llvm::Twine(Bytes));
    copyField<uint8_t>(T.int32_data(), Dst);
    return llvm::Error::success();
  }
  case ElementType::Float:
  case ElementType::Complex64: {
    uint64_t Per = Type == ElementType::Float ? 1 : 2;
    if (llvm::Error E = Need(T.float_data_size(), Per))
      return E;
    copyField<float>(T.float_data(), Dst);
    return llvm::Error::success();
  }
  case ElementType::Double:
  case ElementType::Complex128: {
    uint64_t Per = Type == ElementType::Double ? 1 : 2;
    if (llvm::Error E = Need(T.double_data_size(), Per))
      return E;
    copyField<double>(T.double_data(), Dst);
    return llvm::Error::success();
  }
  case ElementType::Int64:
    if (llvm::Error E = Need(T.int64_data_size(), 1))
      return E;
    copyField<int64_t>(T.int64_data(), Dst);
    return llvm::Error::success();
  case ElementType::UInt64:
  case ElementType::UInt32:
    if (llvm::Error E = Need(T.uint64_data_size(), 1))
      return E;
    if (Type == ElementType::UInt64)
      copyField<uint64_t>(T.uint64_data(), Dst);
    else
      copyField<uint32_t>(T.uint64_data(), Dst);
    return llvm::Error::success();
  case ElementType::Int32:
  case ElementType::Int16:
  case ElementType::Int8:
  case ElementType::UInt16:
  case ElementType::UInt8:
  case ElementType::Bool:
  case ElementType::Float16:
  case ElementType::BFloat16:
    // ONNX keeps all of these in int32_data (half types as bit patterns).
    if (llvm::Error E = Need(T.int32_data_size(), 1))
      return E;
    switch (elementBits(Type)) {
    case 8:
      copyField<uint8_t>(T.int32_data(), Dst);
      break;
    case 16:
      copyField<uint16_t>(T.int32_data(), Dst);
      break;
    default:
      copyField<int32_t>(T.int32_data(), Dst);
    }
    return llvm::Error::success();
  default:
    return makeUnsupportedError(What + " has element type " +
                                elementTypeName(Type) +
                                ", whose data cannot be loaded");
  }
}

// External data: a file inside ModelDir, at offset, of exactly Need bytes.
static llvm::Error externalBytes(const onnx::TensorProto &T,
                                 llvm::StringRef ModelDir, uint64_t Need,
                                 void *Dst, const std::string &What) {
  std::string Loc;
  uint64_t Offset = 0, Length = Need;
  for (const onnx::StringStringEntryProto &KV : T.external_data()) {
    llvm::StringRef V = KV.value();
    if (KV.key() == "location")
      Loc = KV.value();
    else if ((KV.key() == "offset" && V.getAsInteger(10, Offset)) ||
             (KV.key() == "length" && V.getAsInteger(10, Length)))
      return makeInputError(What + ": external data " + KV.key() + " '" + V +
                            "' is not a number");
  }
  if (locationEscapesModelDir(Loc))
    return makeInputError(What + ": external data location '" + Loc +
                          "' is not a relative path inside the model's folder");
  if (Length != Need)
    return makeInputError(What + ": external data length " +
                          llvm::Twine(Length) + " but its dims need " +
                          llvm::Twine(Need) + " bytes");
  llvm::SmallString<256> Path(ModelDir);
  llvm::sys::path::append(Path, Loc);
  uint64_t FileSize = 0;
  if (std::error_code EC = llvm::sys::fs::file_size(Path, FileSize))
    return makeIOError(What + ": external data file '" + Path +
                       "': " + EC.message());
  uint64_t End;
  if (__builtin_add_overflow(Offset, Need, &End) || End > FileSize)
    return makeInputError(What + ": external data file '" + Path + "' has " +
                          llvm::Twine(FileSize) + " bytes, fewer than offset " +
                          llvm::Twine(Offset) + " + " + llvm::Twine(Need));
  if (Need == 0)
    return llvm::Error::success();
  // The slice is mapped and copied in 16 MiB pieces, each piece's file
  // pages dropped from the resident set once copied: mapping it whole kept
  // a 154 MB tensor resident twice at the load's peak. (pread into Dst kept
  // RSS as low, but the first run after it was several times slower on
  // gpt_like, for a reason not found in the time we had; memcpy is not.)
  auto FD = llvm::sys::fs::openNativeFileForRead(Path);
  if (!FD)
    return makeIOError(What + ": external data file '" + Path +
                       "': " + toString(FD.takeError()));
  const uint64_t Align = llvm::sys::fs::mapped_file_region::alignment();
  const uint64_t MapOff = Offset / Align * Align, Skip = Offset - MapOff;
  std::error_code EC;
  llvm::sys::fs::mapped_file_region Map(
      *FD, llvm::sys::fs::mapped_file_region::readonly, size_t(Skip + Need),
      MapOff, EC);
  llvm::sys::fs::closeFile(*FD);
  if (EC)
    return makeIOError(What + ": external data file '" + Path +
                       "': " + EC.message());
  const char *Src = Map.const_data();
  char *Out = static_cast<char *>(Dst);
  const uint64_t Piece = uint64_t(16) << 20; // a multiple of the page size
  for (uint64_t Done = 0; Done < Need;) {
    uint64_t N = std::min(Need - Done, Piece - (Skip + Done) % Piece);
    std::memcpy(Out + Done, Src + Skip + Done, N);
    Done += N;
    // Whole pieces behind us: [start of this piece, Skip + Done) is copied.
    uint64_t End = (Skip + Done) / Piece * Piece;
    if (End >= Piece && (Skip + Done) % Piece == 0)
      ::madvise(const_cast<char *>(Src) + End - Piece, Piece, MADV_DONTNEED);
  }
  return llvm::Error::success();
}

// Type and dims of T, with the packed byte count; no data read.
static llvm::Error tensorHeader(const onnx::TensorProto &T,
                                const std::string &What, ElementType &Type,
                                std::vector<int64_t> &Dims, uint64_t &N,
                                uint64_t &Bytes) {
  if (!elementTypeFromNumber(T.data_type(), Type) ||
      Type == ElementType::Undefined)
    return makeInputError(What + " has element type " +
                          llvm::Twine(T.data_type()) +
                          ", which ONNX 1.12 does not define");
  N = 1;
  Dims.clear();
  for (int64_t D : T.dims()) {
    if (D < 0 || D > MaxDimSize)
      return makeInputError(What + " has dimension " + llvm::Twine(D) +
                            ", outside [0, 2^48]");
    Dims.push_back(D);
    if (__builtin_mul_overflow(N, uint64_t(D), &N))
      return makeOverflowError(What + " has more elements than fit 64 bits");
  }
  if (Type == ElementType::String)
    return makeUnsupportedError(What +
                                " is a string tensor, which cannot be run");
  if (!packedBytes(Type, N, Bytes))
    return makeOverflowError(What + " has more bytes than fit 64 bits");
  return llvm::Error::success();
}

// The bytes of T into Dst (exactly Bytes of them, as tensorHeader said).
// Raw, when given, is T's raw_data, kept out of T by the streaming reader
// (streamModel) so that it is never copied but once, into Dst.
static llvm::Error copyTensorBytes(const onnx::TensorProto &T, ElementType Type,
                                   uint64_t N, uint64_t Bytes,
                                   llvm::StringRef ModelDir, void *Dst,
                                   const std::string &What,
                                   std::optional<llvm::StringRef> Raw) {
  if (T.data_location() == onnx::TensorProto::EXTERNAL) {
    if (ModelDir.empty())
      return makeInputError(What + " has external data, which is only "
                                   "allowed in a model's initializers");
    return externalBytes(T, ModelDir, Bytes, Dst, What);
  }
  if (Raw || T.has_raw_data()) {
    llvm::StringRef R = Raw ? *Raw : llvm::StringRef(T.raw_data());
    if (R.size() != Bytes)
      return makeInputError(What + " has " + llvm::Twine(R.size()) +
                            " bytes of raw data; its dims and type need " +
                            llvm::Twine(Bytes));
    if (Bytes)
      std::memcpy(Dst, R.data(), Bytes);
    return llvm::Error::success();
  }
  return typedBytes(T, Type, N, Dst, What);
}

// T's data into Dst. A bool's bytes become 0 or 1: ONNX stores a bool in a
// byte (raw) or an int32 (typed) and treats any nonzero value as true, and
// the kernels read bool, for which any other byte is undefined behaviour
// (a Where on a constant mask of {0, 2, 1, 1} under UBSan).
static llvm::Error tensorBytes(const onnx::TensorProto &T, ElementType Type,
                               uint64_t N, uint64_t Bytes,
                               llvm::StringRef ModelDir, void *Dst,
                               const std::string &What,
                               std::optional<llvm::StringRef> Raw = {}) {
  if (llvm::Error E =
          copyTensorBytes(T, Type, N, Bytes, ModelDir, Dst, What, Raw))
    return E;
  if (Type == ElementType::Bool && Dst)
    for (uint8_t *P = static_cast<uint8_t *>(Dst), *End = P + Bytes; P != End;
         ++P)
      *P = *P != 0;
  return llvm::Error::success();
}

// True when T's external data names a plain file inside ModelDir that does
// not exist (stripped weights); any other location is left to
// externalBytes, which checks it.
static bool externalFileMissing(const onnx::TensorProto &T,
                                llvm::StringRef ModelDir) {
  if (T.data_location() != onnx::TensorProto::EXTERNAL || ModelDir.empty())
    return false;
  for (const onnx::StringStringEntryProto &KV : T.external_data())
    if (KV.key() == "location") {
      llvm::StringRef Loc = KV.value();
      if (Loc.empty() || llvm::sys::path::is_absolute(Loc) ||
          Loc.contains(".."))
        return false;
      llvm::SmallString<256> Path(ModelDir);
      llvm::sys::path::append(Path, Loc);
      return !llvm::sys::fs::exists(Path);
    }
  return false;
}

// Copies T to Dest(V, Bytes), or has Missing fill it when its external
// file is absent.
static llvm::Error loadOne(const onnx::TensorProto &T, ValueId V,
                           llvm::StringRef ModelDir, TensorDestination Dest,
                           const std::string &What,
                           std::optional<llvm::StringRef> Raw = {},
                           MissingTensorFill Missing = nullptr) {
  ElementType Type;
  std::vector<int64_t> Dims;
  uint64_t N, Bytes;
  if (llvm::Error E = tensorHeader(T, What, Type, Dims, N, Bytes))
    return E;
  void *Dst = Dest(V, Bytes);
  if (!Dst)
    return makeInputError(What + ": " + llvm::Twine(Bytes) +
                          " bytes do not match the planned tensor");
  if (Missing && externalFileMissing(T, ModelDir)) {
    Missing(V, Type, Dims, Dst);
    return llvm::Error::success();
  }
  return tensorBytes(T, Type, N, Bytes, ModelDir, Dst, What, Raw);
}

// A Constant's value_float(s)/value_int(s) as a TensorProto.
static bool constantAsTensor(const onnx::NodeProto &N, onnx::TensorProto &T) {
  for (const onnx::AttributeProto &A : N.attribute()) {
    if (A.name() == "value") {
      T = A.t();
      return true;
    }
    if (A.name() == "value_float") {
      T.set_data_type(onnx::TensorProto::FLOAT);
      T.add_float_data(A.f());
      return true;
    }
    if (A.name() == "value_int") {
      T.set_data_type(onnx::TensorProto::INT64);
      T.add_int64_data(A.i());
      return true;
    }
    if (A.name() == "value_floats") {
      T.set_data_type(onnx::TensorProto::FLOAT);
      T.add_dims(A.floats_size());
      *T.mutable_float_data() = A.floats();
      return true;
    }
    if (A.name() == "value_ints") {
      T.set_data_type(onnx::TensorProto::INT64);
      T.add_dims(A.ints_size());
      *T.mutable_int64_data() = A.ints();
      return true;
    }
  }
  return false;
}

namespace {
/// What loading one model needs, shared by the whole-model and the
/// streaming readers.
struct LoadState {
  const Graph &G;
  llvm::StringRef Path;
  std::string ModelDir;
  TensorDestination Dest;
  MissingTensorFill Missing;
  std::vector<bool> Done;

  LoadState(const Graph &G, llvm::StringRef Path, TensorDestination Dest,
            MissingTensorFill Missing = nullptr)
      : G(G), Path(Path), Dest(Dest), Missing(Missing),
        Done(G.Values.size(), false) {
    llvm::StringRef Dir = llvm::sys::path::parent_path(Path);
    ModelDir = Dir.empty() ? "." : Dir.str();
  }

  llvm::Error initializer(const onnx::TensorProto &T,
                          std::optional<llvm::StringRef> Raw = {}) {
    ValueId V = G.findValue(T.name());
    if (V == NoId || G.Values[V].Kind != ValueKind::Weight)
      return llvm::Error::success(); // the importer decided: not ours
    std::string What = Path.str() + ": initializer '" + T.name() + "'";
    if (llvm::Error E = loadOne(T, V, ModelDir, Dest, What, Raw, Missing))
      return E;
    Done[V] = true;
    return llvm::Error::success();
  }

  llvm::Error node(const onnx::NodeProto &N) {
    if (N.op_type() != "Constant" || N.output_size() < 1)
      return llvm::Error::success();
    ValueId V = G.findValue(N.output(0));
    if (V == NoId)
      return llvm::Error::success();
    std::string What = Path.str() + ": Constant '" + N.output(0) + "'";
    onnx::TensorProto T;
    if (!constantAsTensor(N, T))
      return makeUnsupportedError(What + " has no dense value to load");
    if (llvm::Error E = loadOne(T, V, "", Dest, What))
      return E;
    Done[V] = true;
    return llvm::Error::success();
  }

  /// The Constants of If branches, from the nodes the importer kept
  /// (Node::SourceNode): the file holds them inside their If, under names
  /// the flattening may have changed.
  llvm::Error branchConstants() {
    for (const Node &Nd : G.Nodes) {
      if (!Nd.SourceNode || Nd.Outputs.empty() || Nd.Outputs[0] == NoId ||
          Done[Nd.Outputs[0]])
        continue;
      onnx::NodeProto N;
      onnx::TensorProto T;
      std::string What =
          Path.str() + ": Constant '" + G.Values[Nd.Outputs[0]].Name + "'";
      if (!N.ParseFromString(*Nd.SourceNode) || !constantAsTensor(N, T))
        return makeUnsupportedError(What + " has no dense value to load");
      if (llvm::Error E = loadOne(T, Nd.Outputs[0], "", Dest, What))
        return E;
      Done[Nd.Outputs[0]] = true;
    }
    return llvm::Error::success();
  }

  llvm::Error finish() {
    if (llvm::Error E = branchConstants())
      return E;
    for (ValueId W : G.Weights)
      if (!Done[W])
        return makeUnsupportedError(
            Path + ": weight '" + G.Values[W].Name +
            "' has no dense data (sparse initializer?)");
    return llvm::Error::success();
  }
};
} // namespace

static llvm::Error loadFromModel(const onnx::ModelProto &M, const Graph &G,
                                 llvm::StringRef Path, TensorDestination Dest,
                                 MissingTensorFill Missing) {
  LoadState L(G, Path, Dest, Missing);
  for (const onnx::TensorProto &T : M.graph().initializer())
    if (llvm::Error E = L.initializer(T))
      return E;
  for (const onnx::NodeProto &N : M.graph().node())
    if (llvm::Error E = L.node(N))
      return E;
  return L.finish();
}

using google::protobuf::internal::WireFormatLite;

/// Calls Fn(Field, Whole, Body) for each field of the serialized message
/// Msg, in order: Whole is the field's encoding (tag included), Body the
/// payload of a length-delimited field (empty otherwise). False when Msg is
/// not a well-formed message.
static bool
scanFields(llvm::StringRef Msg,
           llvm::function_ref<bool(int, llvm::StringRef, llvm::StringRef)> Fn) {
  google::protobuf::io::CodedInputStream S(
      reinterpret_cast<const uint8_t *>(Msg.data()), int(Msg.size()));
  S.SetTotalBytesLimit(INT_MAX);
  for (;;) {
    int Start = S.CurrentPosition();
    uint32_t Tag = S.ReadTag();
    if (Tag == 0)
      return S.ConsumedEntireMessage() && size_t(Start) == Msg.size();
    llvm::StringRef Body;
    if (WireFormatLite::GetTagWireType(Tag) ==
        WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t Len;
      if (!S.ReadVarint32(&Len))
        return false;
      int At = S.CurrentPosition();
      if (uint64_t(At) + Len > Msg.size() || !S.Skip(int(Len)))
        return false;
      Body = Msg.substr(At, Len);
    } else if (!WireFormatLite::SkipField(&S, Tag)) {
      return false;
    }
    int End = S.CurrentPosition();
    if (!Fn(WireFormatLite::GetTagFieldNumber(Tag),
            Msg.substr(Start, End - Start), Body))
      return false;
  }
}

// Field numbers of onnx.proto (ONNX 1.12).
enum : int {
  ModelGraph = 7,
  GraphNode = 1,
  GraphInitializer = 5,
  TensorRawData = 9,
};

/// Reads a binary model one initializer and one node at a time, so the
/// weights are never held twice: each initializer's fields except raw_data
/// are parsed into a TensorProto, and raw_data is copied from the model's
/// bytes straight into its destination. Release(Raw) runs after each copy
/// (the mapped file's pages are dropped from the resident set).
static llvm::Error
streamModel(llvm::StringRef Bytes, LoadState &L,
            llvm::function_ref<void(llvm::StringRef)> Release) {
  llvm::Error Err = llvm::Error::success();
  // Keeps the first error; true when E is success.
  auto Keep = [&](llvm::Error E) {
    if (!E)
      return true;
    llvm::consumeError(std::move(Err));
    Err = std::move(E);
    return false;
  };
  auto Bad = [&](llvm::StringRef Why) {
    return Keep(
        makeInputError(L.Path + ": not a valid ONNX model (" + Why + ")"));
  };
  auto OnTensor = [&](llvm::StringRef Msg) {
    std::string Header;
    std::optional<llvm::StringRef> Raw;
    if (!scanFields(Msg,
                    [&](int F, llvm::StringRef Whole, llvm::StringRef Body) {
                      if (F == TensorRawData)
                        Raw = Body;
                      else
                        Header.append(Whole.data(), Whole.size());
                      return true;
                    }))
      return Bad("a malformed initializer");
    onnx::TensorProto T;
    if (!T.ParseFromString(Header))
      return Bad("a malformed initializer");
    if (!Keep(L.initializer(T, Raw)))
      return false;
    if (Raw)
      Release(*Raw);
    return true;
  };
  auto OnGraph = [&](int F, llvm::StringRef, llvm::StringRef Body) {
    if (F == GraphInitializer)
      return OnTensor(Body);
    if (F != GraphNode)
      return true;
    onnx::NodeProto N;
    if (!N.ParseFromArray(Body.data(), int(Body.size())))
      return Bad("a malformed node");
    return Keep(L.node(N));
  };
  bool SawGraph = false;
  bool Ok = scanFields(Bytes, [&](int F, llvm::StringRef, llvm::StringRef B) {
    if (F != ModelGraph)
      return true;
    SawGraph = true;
    if (scanFields(B, OnGraph))
      return true;
    if (Err)
      return false; // already says why
    return Bad("a malformed graph");
  });
  if (Err)
    return Err;
  if (!Ok || !SawGraph)
    return makeInputError(L.Path + ": not a valid ONNX model");
  return L.finish();
}

// Runs Fn, turning protobuf/ONNX exceptions into errors naming Path.
template <typename Fn>
static llvm::Error guarded(llvm::StringRef Path, Fn &&Body) {
  try {
    return Body();
  } catch (const std::exception &E) {
    return makeInputError(Path + ": ONNX error: " + E.what());
  } catch (...) {
    return makeInternalError(Path + ": unknown ONNX exception");
  }
}

static llvm::Error parseModel(llvm::StringRef Path, llvm::StringRef Bytes,
                              onnx::ModelProto &M) {
  llvm::StringRef Start = Bytes.ltrim();
  if (Path.endswith(".onnxtxt") || Path.endswith(".onnxtext") ||
      Path.endswith(".txt") || Start.startswith("<") || Start.startswith("#")) {
    std::string Owned = Bytes.str();
    onnx::Status S = onnx::OnnxParser::Parse(M, Owned.c_str());
    if (!S.IsOK())
      return makeInputError(Path + ": ONNX text syntax error: " +
                            llvm::StringRef(S.ErrorMessage()).trim());
    return llvm::Error::success();
  }
  if (Bytes.size() > size_t(INT_MAX))
    return makeUnsupportedError(Path + ": larger than protobuf's 2 GiB limit");
  google::protobuf::io::CodedInputStream Stream(
      reinterpret_cast<const uint8_t *>(Bytes.data()), int(Bytes.size()));
  Stream.SetTotalBytesLimit(INT_MAX);
  if (!M.ParseFromCodedStream(&Stream) || !Stream.ConsumedEntireMessage())
    return makeInputError(Path + ": not a valid ONNX model");
  return llvm::Error::success();
}

static bool isTextModel(llvm::StringRef Path, llvm::StringRef Bytes) {
  llvm::StringRef Start = Bytes.ltrim();
  return Path.endswith(".onnxtxt") || Path.endswith(".onnxtext") ||
         Path.endswith(".txt") || Start.startswith("<") ||
         Start.startswith("#");
}

/// The model file mapped read-only, so that streamModel can drop the pages
/// of each initializer from the resident set once it is copied (a buffer
/// read into memory could not give them back).
static llvm::Error streamModelFile(llvm::StringRef Path, LoadState &L) {
  auto FD = llvm::sys::fs::openNativeFileForRead(Path);
  if (!FD)
    return makeIOError(Path + ": cannot read: " + toString(FD.takeError()));
  uint64_t Size = 0;
  std::error_code EC = llvm::sys::fs::file_size(Path, Size);
  if (!EC && Size == 0)
    return makeInputError(Path + ": the file is empty, not an ONNX model");
  std::unique_ptr<llvm::sys::fs::mapped_file_region> Map;
  if (!EC)
    Map = std::make_unique<llvm::sys::fs::mapped_file_region>(
        *FD, llvm::sys::fs::mapped_file_region::readonly, size_t(Size), 0, EC);
  llvm::sys::fs::closeFile(*FD);
  if (EC)
    return makeIOError(Path + ": cannot map: " + EC.message());
  llvm::StringRef Bytes(Map->const_data(), Size);
  if (Size > uint64_t(INT_MAX))
    return makeUnsupportedError(Path + ": larger than protobuf's 2 GiB limit");
  const uint64_t Page = llvm::sys::Process::getPageSizeEstimate();
  auto Release = [&](llvm::StringRef Raw) {
    // Whole pages inside Raw only: a page shared with the next field
    // stays (it is read again anyway).
    uint64_t Begin = (uint64_t(uintptr_t(Raw.data())) + Page - 1) / Page * Page;
    uint64_t End = uint64_t(uintptr_t(Raw.data() + Raw.size())) / Page * Page;
    if (End > Begin)
      ::madvise(reinterpret_cast<void *>(uintptr_t(Begin)), End - Begin,
                MADV_DONTNEED);
  };
  return streamModel(Bytes, L, Release);
}

static void putVarint(std::string &Out, uint64_t V) {
  do {
    uint8_t B = V & 0x7F;
    V >>= 7;
    Out.push_back(char(V ? B | 0x80 : B));
  } while (V);
}

static void putField(std::string &Out, int Field, llvm::StringRef Body) {
  putVarint(Out, uint64_t(Field) << 3 | 2); // length-delimited
  putVarint(Out, Body.size());
  Out.append(Body.data(), Body.size());
}

// One initializer, its raw_data (Raw, at Offset in the file) replaced by an
// external-data reference to the same bytes of the model file Name.
static bool referenceInitializer(llvm::StringRef Msg, llvm::StringRef Name,
                                 uint64_t FileBase, std::string &Out) {
  std::string Header;
  std::optional<llvm::StringRef> Raw;
  if (!scanFields(Msg, [&](int F, llvm::StringRef Whole, llvm::StringRef B) {
        if (F == TensorRawData)
          Raw = B;
        else
          Header.append(Whole.data(), Whole.size());
        return true;
      }))
    return false;
  // Tensors of up to 1024 elements keep their values in the graph (the
  // importer's MaxKeptElements); 8 KiB of raw data is more than that for
  // every element type.
  if (!Raw || Raw->size() <= 8192) {
    Out.append(Msg.data(), Msg.size());
    return true;
  }
  onnx::TensorProto T;
  if (!T.ParseFromString(Header))
    return false;
  T.set_data_location(onnx::TensorProto::EXTERNAL);
  auto Add = [&](const char *K, const std::string &V) {
    onnx::StringStringEntryProto *E = T.add_external_data();
    E->set_key(K);
    E->set_value(V);
  };
  Add("location", Name.str());
  Add("offset", std::to_string(uint64_t(uintptr_t(Raw->data())) - FileBase));
  Add("length", std::to_string(Raw->size()));
  return T.AppendToString(&Out);
}

llvm::Expected<std::optional<std::string>>
oomplan::referenceWeightsInPlace(llvm::StringRef ModelPath) {
  auto Buf = llvm::MemoryBuffer::getFile(ModelPath, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!Buf)
    return makeIOError(ModelPath +
                       ": cannot read: " + Buf.getError().message());
  llvm::StringRef Bytes = (*Buf)->getBuffer();
  if (Bytes.empty() || isTextModel(ModelPath, Bytes.take_front(64)) ||
      Bytes.size() > size_t(INT_MAX))
    return std::nullopt;
  const uint64_t Base = uint64_t(uintptr_t(Bytes.data()));
  const std::string Name = llvm::sys::path::filename(ModelPath).str();
  std::string Out;
  bool Changed = false;
  auto Rewritten = guarded(ModelPath, [&]() -> llvm::Error {
    bool Ok = scanFields(
        Bytes, [&](int F, llvm::StringRef Whole, llvm::StringRef Body) {
          if (F != ModelGraph) {
            Out.append(Whole.data(), Whole.size());
            return true;
          }
          std::string Graph;
          bool GraphOk = scanFields(
              Body, [&](int GF, llvm::StringRef GWhole, llvm::StringRef GBody) {
                if (GF != GraphInitializer) {
                  Graph.append(GWhole.data(), GWhole.size());
                  return true;
                }
                std::string Init;
                if (!referenceInitializer(GBody, Name, Base, Init))
                  return false;
                Changed |= Init.size() != GBody.size();
                putField(Graph, GraphInitializer, Init);
                return true;
              });
          if (GraphOk)
            putField(Out, ModelGraph, Graph);
          return GraphOk;
        });
    return Ok ? llvm::Error::success()
              : makeInputError(ModelPath + ": not a valid ONNX model");
  });
  if (Rewritten)
    return Rewritten;
  if (!Changed)
    return std::nullopt;
  return std::optional<std::string>(std::move(Out));
}

llvm::Error oomplan::loadTensorData(const Graph &G, llvm::StringRef ModelPath,
                                    TensorDestination Dest,
                                    std::optional<llvm::StringRef> Bytes,
                                    MissingTensorFill Missing) {
  // Binary models stream: from the mapped file, or from the given bytes.
  if (Bytes && !isTextModel(ModelPath, *Bytes)) {
    if (Bytes->size() > size_t(INT_MAX))
      return makeUnsupportedError(ModelPath +
                                  ": larger than protobuf's 2 GiB limit");
    return guarded(ModelPath, [&]() -> llvm::Error {
      LoadState L(G, ModelPath, Dest, Missing);
      return streamModel(*Bytes, L, [](llvm::StringRef) {});
    });
  }
  if (!Bytes && !ModelPath.endswith(".onnxtxt") &&
      !ModelPath.endswith(".onnxtext") && !ModelPath.endswith(".txt")) {
    // The first bytes tell a text model from a binary one.
    char Head[64] = {0};
    if (auto FD = llvm::sys::fs::openNativeFileForRead(ModelPath)) {
      auto Got = llvm::sys::fs::readNativeFile(
          *FD, llvm::MutableArrayRef<char>(Head, sizeof(Head) - 1));
      llvm::sys::fs::closeFile(*FD);
      if (!Got)
        llvm::consumeError(Got.takeError());
    } else {
      llvm::consumeError(FD.takeError());
    }
    if (!isTextModel(ModelPath, Head))
      return guarded(ModelPath, [&]() -> llvm::Error {
        LoadState L(G, ModelPath, Dest, Missing);
        return streamModelFile(ModelPath, L);
      });
  }
  std::unique_ptr<llvm::MemoryBuffer> Owned;
  if (!Bytes) {
    auto Buf = llvm::MemoryBuffer::getFile(ModelPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (!Buf)
      return makeIOError(ModelPath +
                         ": cannot read: " + Buf.getError().message());
    Owned = std::move(*Buf);
    Bytes = Owned->getBuffer();
  }
  return guarded(ModelPath, [&]() -> llvm::Error {
    // Scoped so the parsed copy of the weights is freed before returning.
    onnx::ModelProto M;
    if (llvm::Error E = parseModel(ModelPath, *Bytes, M))
      return E;
    return loadFromModel(M, G, ModelPath, Dest, Missing);
  });
}

llvm::Expected<TensorFile> oomplan::readTensorFile(llvm::StringRef Path) {
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!Buf)
    return makeIOError(Path + ": cannot read: " + Buf.getError().message());
  TensorFile Out;
  llvm::Error E = guarded(Path, [&]() -> llvm::Error {
    llvm::StringRef Bytes = (*Buf)->getBuffer();
    onnx::TensorProto T;
    if (Bytes.size() > size_t(INT_MAX))
      return makeUnsupportedError(Path + ": larger than 2 GiB");
    google::protobuf::io::CodedInputStream Stream(
        reinterpret_cast<const uint8_t *>(Bytes.data()), int(Bytes.size()));
    Stream.SetTotalBytesLimit(INT_MAX);
    if (!T.ParseFromCodedStream(&Stream) || !Stream.ConsumedEntireMessage() ||
        !T.has_data_type())
      return makeInputError(Path + ": not a serialized ONNX TensorProto");
    std::string What = Path.str() + ": tensor";
    uint64_t N, Size;
    if (llvm::Error E = tensorHeader(T, What, Out.Type, Out.Dims, N, Size))
      return E;
    Out.Name = T.name();
    // The dims are only a claim: compare them with the data the file holds
    // before allocating what they ask for (a corrupt header of 2^40 x 80
    // bytes would otherwise abort on allocation). Raw data is at most the
    // file; a typed value takes at least one byte in the file and at most
    // eight in memory. The exact count is checked while copying.
    uint64_t Room = uint64_t(Bytes.size()) * 8;
    if (T.data_location() != onnx::TensorProto::EXTERNAL && Size > Room)
      return makeInputError(What + ": its dims and type need " +
                            llvm::Twine(Size) + " bytes, but the file holds " +
                            llvm::Twine(Bytes.size()) + " bytes");
    if (T.data_location() == onnx::TensorProto::EXTERNAL)
      return tensorBytes(T, Out.Type, N, Size, "", nullptr, What);
    Out.Bytes.resize(Size);
    return tensorBytes(T, Out.Type, N, Size, "", Out.Bytes.data(), What);
  });
  if (E)
    return E;
  return Out;
}

llvm::Error oomplan::writeTensorFile(llvm::StringRef Path, llvm::StringRef Name,
                                     ElementType Type,
                                     llvm::ArrayRef<int64_t> Dims,
                                     const void *Data, uint64_t Bytes) {
  return guarded(Path, [&]() -> llvm::Error {
    onnx::TensorProto T;
    T.set_name(Name.str());
    T.set_data_type(static_cast<int32_t>(Type));
    for (int64_t D : Dims)
      T.add_dims(D);
    T.set_raw_data(static_cast<const char *>(Data), Bytes);
    std::string Out;
    if (!T.SerializeToString(&Out))
      return makeInternalError(Path + ": cannot serialize the tensor");
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    if (EC)
      return makeIOError(Path + ": cannot write: " + EC.message());
    OS << Out;
    OS.close();
    if (OS.has_error())
      return makeIOError(Path + ": write failed: " + OS.error().message());
    return llvm::Error::success();
  });
}
