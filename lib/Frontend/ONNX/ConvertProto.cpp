//===- ConvertProto.cpp - ModelProto to Graph -----------------------------===//
//
// Field-by-field conversion of a parsed ONNX model into a GraphBuilder. It
// checks what the IR needs to be sound: known element types, dimensions in
// [0, 2^48], raw data lengths that match the dims, external-data locations
// that stay inside the model's folder, default-domain opsets we support, op
// types the ONNX schema registry knows, and no Loop or Scan subgraphs (If
// is flattened by ConvertIf.cpp).
//
//===----------------------------------------------------------------------===//
#include "ConvertProto.h"
#include "ContribOps.h"
#include "Converter.h"
#include "NewerOpsets.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/IR/GraphBuilder.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Path.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

using namespace oomplan;

llvm::Error Converter::convertType(const std::string &What, int32_t Number,
                                   ElementType &Out) {
  if (!elementTypeFromNumber(Number, Out))
    return Number >= 23 && Number <= 26
               ? unsupported(What + ": unsupported: element type " +
                             llvm::Twine(Number) +
                             " (float4e2m1, float8e8m0, uint2 and int2: ONNX "
                             "1.18 to 1.20)")
               : err(What + " has element type " + llvm::Twine(Number) +
                     ", which ONNX does not define");
  return llvm::Error::success();
}

llvm::Error
Converter::convertDims(const std::string &What,
                       const google::protobuf::RepeatedField<int64_t> &Dims,
                       std::vector<int64_t> &Out) {
  for (int64_t D : Dims) {
    if (D < 0 || D > MaxDimSize)
      return err(What + " has dimension " + llvm::Twine(D) +
                 ", outside [0, 2^48]");
    Out.push_back(D);
  }
  return llvm::Error::success();
}

llvm::Expected<ValueDesc>
Converter::convertValueInfo(const onnx::ValueInfoProto &VI,
                            bool RequireTensor) {
  ValueDesc D;
  D.Name = VI.name();
  const std::string What = "value '" + VI.name() + "'";
  if (!VI.has_type())
    return D;
  if (!VI.type().has_tensor_type()) {
    if (RequireTensor)
      return unsupported(
          "unsupported: " + What +
          " is not a tensor (sequence, map and optional types are not "
          "supported yet)");
    return D;
  }
  const onnx::TypeProto_Tensor &TT = VI.type().tensor_type();
  if (llvm::Error E = convertType(What, TT.elem_type(), D.Type))
    return E;
  if (!TT.has_shape())
    return D;
  D.HasShape = true;
  for (const onnx::TensorShapeProto_Dimension &Dim : TT.shape().dim()) {
    if (Dim.has_dim_value()) {
      int64_t V = Dim.dim_value();
      if (V < 0 || V > MaxDimSize)
        return err(What + " has dimension " + llvm::Twine(V) +
                   ", outside [0, 2^48]");
      D.Shape.push_back(DeclaredDim::fixed(V));
    } else if (Dim.has_dim_param() && !Dim.dim_param().empty()) {
      D.Shape.push_back(DeclaredDim::symbol(B.getOrAddSymbol(Dim.dim_param())));
    } else {
      D.Shape.push_back(DeclaredDim::unknown());
    }
  }
  return D;
}

// Reads a little-endian element of the given width from raw bytes.
template <typename T> static T readRaw(const std::string &Raw, size_t I) {
  T V;
  std::memcpy(&V, Raw.data() + I * sizeof(T), sizeof(T));
  return V;
}

static double halfToDouble(uint16_t H, bool BFloat) {
  if (BFloat) {
    uint32_t Bits = static_cast<uint32_t>(H) << 16;
    float F;
    std::memcpy(&F, &Bits, 4);
    return F;
  }
  int Exp = (H >> 10) & 0x1f, Mant = H & 0x3ff;
  double Sign = (H & 0x8000) ? -1.0 : 1.0;
  if (Exp == 0)
    return Sign * std::ldexp(Mant, -24);
  if (Exp == 31)
    return Mant ? NAN : Sign * INFINITY;
  return Sign * std::ldexp(Mant + 1024, Exp - 25);
}

// The number of values a typed field holds, and how many it takes per
// element (complex numbers are two floats or doubles), per ONNX's TensorProto.
static std::pair<uint64_t, unsigned> typedDataCount(const onnx::TensorProto &T,
                                                    ElementType Type) {
  switch (Type) {
  case ElementType::Float:
    return {T.float_data_size(), 1};
  case ElementType::Complex64:
    return {T.float_data_size(), 2};
  case ElementType::Double:
    return {T.double_data_size(), 1};
  case ElementType::Complex128:
    return {T.double_data_size(), 2};
  case ElementType::Int64:
    return {T.int64_data_size(), 1};
  case ElementType::UInt32:
  case ElementType::UInt64:
    return {T.uint64_data_size(), 1};
  case ElementType::String:
    return {T.string_data_size(), 1};
  default: // int32, narrower integers, bool, float16, bfloat16
    return {T.int32_data_size(), 1};
  }
}

// The data a tensor holds must match its dims, whatever its size: a short
// raw_data means a corrupt file, and sizing it from the dims alone would
// plan a tensor that does not exist.
llvm::Error Converter::checkDataLength(const std::string &What,
                                       const onnx::TensorProto &T,
                                       ElementType Type, uint64_t N) {
  if (T.has_raw_data()) {
    if (Type == ElementType::String)
      return err(What + " is a string tensor with raw_data, which ONNX does "
                        "not allow");
    uint64_t Need;
    if (!packedBytes(Type, N, Need))
      return overflow(What + " has more bytes than fit in 64 bits");
    if (T.raw_data().size() != Need)
      return err(What + " has " + llvm::Twine(T.raw_data().size()) +
                 " bytes of raw data; its dims and type need " +
                 llvm::Twine(Need));
    return llvm::Error::success();
  }
  if (isSubByte(Type)) {
    // int32_data holds the packed bytes, one an entry.
    if (uint64_t(T.int32_data_size()) != (N + 1) / 2)
      return err(What + " holds " + llvm::Twine(T.int32_data_size()) +
                 " packed bytes; its dims need " + llvm::Twine((N + 1) / 2));
    return llvm::Error::success();
  }
  auto [Count, PerElement] = typedDataCount(T, Type);
  // Count <= INT_MAX (a protobuf repeated field), so Count / PerElement and
  // the comparison cannot overflow.
  if (Count % PerElement != 0 || Count / PerElement != N)
    return err(What + " holds " + llvm::Twine(Count / PerElement) +
               " values; its dims need " + llvm::Twine(N));
  return llvm::Error::success();
}

llvm::Error Converter::extractValues(const onnx::TensorProto &T,
                                     TensorData &D) {
  uint64_t N = D.numElements();
  unsigned Bits = elementBits(D.Type);
  if (Bits == 0 || D.Type == ElementType::Complex64 ||
      D.Type == ElementType::Complex128 || isSubByte(D.Type))
    return llvm::Error::success(); // strings, complex, int4: dims only
  if (T.has_raw_data()) {
    const std::string &Raw = T.raw_data(); // length checked by checkDataLength
    for (uint64_t I = 0; I < N; ++I) {
      switch (D.Type) {
      case ElementType::Float:
        D.Floats.push_back(readRaw<float>(Raw, I));
        break;
      case ElementType::Double:
        D.Floats.push_back(readRaw<double>(Raw, I));
        break;
      case ElementType::Float16:
      case ElementType::BFloat16:
        D.Floats.push_back(halfToDouble(readRaw<uint16_t>(Raw, I),
                                        D.Type == ElementType::BFloat16));
        break;
      case ElementType::Int8:
        D.Ints.push_back(readRaw<int8_t>(Raw, I));
        break;
      case ElementType::UInt8:
        D.Ints.push_back(readRaw<uint8_t>(Raw, I));
        break;
      case ElementType::Bool: // any nonzero byte is true (as the loader)
        D.Ints.push_back(readRaw<uint8_t>(Raw, I) != 0);
        break;
      case ElementType::Int16:
        D.Ints.push_back(readRaw<int16_t>(Raw, I));
        break;
      case ElementType::UInt16:
        D.Ints.push_back(readRaw<uint16_t>(Raw, I));
        break;
      case ElementType::Int32:
        D.Ints.push_back(readRaw<int32_t>(Raw, I));
        break;
      case ElementType::UInt32:
        D.Ints.push_back(readRaw<uint32_t>(Raw, I));
        break;
      case ElementType::Int64:
        D.Ints.push_back(readRaw<int64_t>(Raw, I));
        break;
      case ElementType::UInt64:
        D.Ints.push_back(static_cast<int64_t>(readRaw<uint64_t>(Raw, I)));
        break;
      default:
        break;
      }
    }
    return llvm::Error::success();
  }
  // Typed fields: each ONNX type lives in one of them (lengths checked by
  // checkDataLength).
  switch (D.Type) {
  case ElementType::Float:
    for (float F : T.float_data())
      D.Floats.push_back(F);
    break;
  case ElementType::Double:
    for (double F : T.double_data())
      D.Floats.push_back(F);
    break;
  case ElementType::Int64:
    for (int64_t V : T.int64_data())
      D.Ints.push_back(V);
    break;
  case ElementType::UInt32:
  case ElementType::UInt64:
    for (uint64_t V : T.uint64_data())
      D.Ints.push_back(static_cast<int64_t>(V));
    break;
  case ElementType::Float16:
  case ElementType::BFloat16:
    for (int32_t V : T.int32_data())
      D.Floats.push_back(halfToDouble(static_cast<uint16_t>(V),
                                      D.Type == ElementType::BFloat16));
    break;
  case ElementType::Bool:
    for (int32_t V : T.int32_data())
      D.Ints.push_back(V != 0);
    break;
  default: // int32 and narrower integers
    for (int32_t V : T.int32_data())
      D.Ints.push_back(V);
    break;
  }
  return llvm::Error::success();
}

// A location must be relative and stay inside the model's folder: a model
// must not make us touch /etc/passwd, even though we never read the data.
static bool escapesModelDir(llvm::StringRef Loc) {
  if (Loc.empty() || llvm::sys::path::is_absolute(Loc) ||
      llvm::sys::path::is_absolute(Loc, llvm::sys::path::Style::windows) ||
      Loc.startswith("/") || Loc.startswith("\\"))
    return true;
  int Depth = 0;
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  Loc.split(Parts, '/');
  for (llvm::StringRef P : Parts) {
    for (llvm::StringRef Q : llvm::split(P, '\\')) {
      if (Q == "..")
        --Depth;
      else if (!Q.empty() && Q != ".")
        ++Depth;
      if (Depth < 0)
        return true;
    }
  }
  return false;
}

llvm::Expected<std::shared_ptr<TensorData>>
Converter::convertTensor(const std::string &What, const onnx::TensorProto &T,
                         std::string *ExternalLocation) {
  auto D = std::make_shared<TensorData>();
  if (llvm::Error E = convertType(What, T.data_type(), D->Type))
    return E;
  if (D->Type == ElementType::Undefined)
    return err(What + " has no element type");
  if (llvm::Error E = convertDims(What, T.dims(), D->Dims))
    return E;
  uint64_t N = 1;
  for (int64_t Dim : D->Dims)
    if (__builtin_mul_overflow(N, static_cast<uint64_t>(Dim), &N))
      return overflow(What + " has more elements than fit in 64 bits");
  if (T.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string Loc;
    for (const onnx::StringStringEntryProto &KV : T.external_data())
      if (KV.key() == "location")
        Loc = KV.value();
    if (escapesModelDir(Loc))
      return err(What + ": external data location '" + Loc +
                 "' is not a relative path inside the model's folder");
    if (!ExternalLocation)
      return err(What + ": external data is only allowed in initializers");
    *ExternalLocation = Loc;
    return D;
  }
  if (llvm::Error E = checkDataLength(What, T, D->Type, N))
    return E;
  if (N <= MaxKeptElements)
    if (llvm::Error E = extractValues(T, *D))
      return E;
  return D;
}

llvm::Error Converter::convertWeights(const onnx::GraphProto &GP) {
  if (!Scopes.empty() &&
      (GP.initializer_size() != 0 || GP.sparse_initializer_size() != 0))
    return unsupported(
        "unsupported: initializers inside a subgraph" + ScopeWhere +
        " (exporters write Constant nodes there; oomplan reads weights from "
        "the top-level graph only)");
  for (const onnx::TensorProto &T : GP.initializer()) {
    std::string Loc;
    auto D = convertTensor("initializer '" + T.name() + "'", T, &Loc);
    if (!D)
      return D.takeError();
    ValueDesc VD;
    VD.Name = T.name();
    VD.Type = (*D)->Type;
    VD.HasShape = true;
    for (int64_t Dim : (*D)->Dims)
      VD.Shape.push_back(DeclaredDim::fixed(Dim));
    if (Scopes.empty())
      InputDims[T.name()] = (*D)->Dims;
    std::shared_ptr<const TensorData> Kept;
    if (Loc.empty() && (*D)->numElements() <= MaxKeptElements) {
      Kept = *D;
      noteKnownWeight(T.name(), *Kept);
    }
    if (llvm::Error E = B.addWeight(std::move(VD), Kept, Loc))
      return E;
  }
  for (const onnx::SparseTensorProto &S : GP.sparse_initializer()) {
    const std::string What = "sparse initializer '" + S.values().name() + "'";
    ValueDesc VD;
    VD.Name = S.values().name();
    if (llvm::Error E = convertType(What, S.values().data_type(), VD.Type))
      return E;
    std::vector<int64_t> Dims;
    if (llvm::Error E = convertDims(What, S.dims(), Dims))
      return E;
    VD.HasShape = true;
    for (int64_t Dim : Dims)
      VD.Shape.push_back(DeclaredDim::fixed(Dim));
    if (llvm::Error E = B.addWeight(std::move(VD), nullptr, ""))
      return E;
  }
  return llvm::Error::success();
}

bool oomplan::locationEscapesModelDir(llvm::StringRef Loc) {
  return escapesModelDir(Loc);
}

llvm::Expected<Attribute> Converter::convertAttr(const onnx::AttributeProto &A,
                                                 const std::string &Where) {
  Attribute Out;
  Out.Name = A.name();
  switch (A.type()) {
  case onnx::AttributeProto::FLOAT:
    Out.Kind = AttrKind::Float;
    Out.F = A.f();
    break;
  case onnx::AttributeProto::INT:
    Out.Kind = AttrKind::Int;
    Out.I = A.i();
    break;
  case onnx::AttributeProto::STRING:
    Out.Kind = AttrKind::String;
    Out.S = A.s();
    break;
  case onnx::AttributeProto::FLOATS:
    Out.Kind = AttrKind::Floats;
    Out.Floats.assign(A.floats().begin(), A.floats().end());
    break;
  case onnx::AttributeProto::INTS:
    Out.Kind = AttrKind::Ints;
    Out.Ints.assign(A.ints().begin(), A.ints().end());
    break;
  case onnx::AttributeProto::STRINGS:
    Out.Kind = AttrKind::Strings;
    Out.Strings.assign(A.strings().begin(), A.strings().end());
    break;
  case onnx::AttributeProto::TENSOR: {
    auto T =
        convertTensor(Where + ": attribute '" + A.name() + "'", A.t(), nullptr);
    if (!T)
      return T.takeError();
    Out.Kind = AttrKind::Tensor;
    Out.T = *T;
    break;
  }
  case onnx::AttributeProto::GRAPH:
  case onnx::AttributeProto::GRAPHS:
    Out.Kind = AttrKind::Graph;
    break;
  default:
    Out.Kind = AttrKind::Other; // sparse tensors, type protos: not needed
    break;
  }
  return Out;
}

// Input and output counts within the schema's range, and no required
// (single, non-optional) input left empty: shape rules rely on both.
llvm::Error Converter::checkArity(const onnx::NodeProto &N,
                                  const onnx::OpSchema &Schema,
                                  const std::string &Where) {
  int NumIn = N.input_size(), NumOut = N.output_size();
  if (NumIn < Schema.min_input() || NumIn > Schema.max_input())
    return err(Where + ": has " + llvm::Twine(NumIn) + " inputs; " +
               N.op_type() + " takes " + llvm::Twine(Schema.min_input()) +
               " to " + llvm::Twine(Schema.max_input()));
  if (NumOut < Schema.min_output() || NumOut > Schema.max_output())
    return err(Where + ": has " + llvm::Twine(NumOut) + " outputs; " +
               N.op_type() + " produces " + llvm::Twine(Schema.min_output()) +
               " to " + llvm::Twine(Schema.max_output()));
  const auto &Formal = Schema.inputs();
  for (int I = 0; I < NumIn && !Formal.empty(); ++I) {
    const auto &P = Formal[std::min<size_t>(I, Formal.size() - 1)];
    if (N.input(I).empty() &&
        P.GetOption() != onnx::OpSchema::FormalParameterOption::Optional)
      return err(Where + ": required input " + llvm::Twine(I) + " ('" +
                 P.GetName() + "') is empty");
  }
  return llvm::Error::success();
}

// The type an attribute has in the file: its declared type, or (files that
// leave it UNDEFINED) the field that holds a value.
static onnx::AttributeProto::AttributeType
attributeType(const onnx::AttributeProto &A) {
  using AP = onnx::AttributeProto;
  if (A.type() != AP::UNDEFINED)
    return A.type();
  if (A.has_f())
    return AP::FLOAT;
  if (A.has_i())
    return AP::INT;
  if (A.has_s())
    return AP::STRING;
  if (A.has_t())
    return AP::TENSOR;
  if (A.has_g())
    return AP::GRAPH;
  if (A.floats_size())
    return AP::FLOATS;
  if (A.ints_size())
    return AP::INTS;
  if (A.strings_size())
    return AP::STRINGS;
  return AP::UNDEFINED;
}

// Every attribute the schema knows must have the schema's type: the IR's
// getters read one of another type as absent, so Gemm's alpha given as a
// string, or Conv's kernel_shape as floats, would silently be the default
// (ONNX's checker and ONNX Runtime refuse such a node too). Empty when all
// agree, else the message.
static std::string checkAttributeTypes(const onnx::NodeProto &N,
                                       const onnx::OpSchema &Schema) {
  const auto &Formal = Schema.attributes();
  for (const onnx::AttributeProto &A : N.attribute()) {
    auto It = Formal.find(A.name());
    if (It == Formal.end())
      continue;
    onnx::AttributeProto::AttributeType T = attributeType(A);
    if (T == onnx::AttributeProto::UNDEFINED || T == It->second.type)
      continue;
    return "attribute '" + A.name() + "' is " +
           onnx::AttributeProto::AttributeType_Name(T) + "; " + N.op_type() +
           "-" + std::to_string(Schema.since_version()) + " takes " +
           onnx::AttributeProto::AttributeType_Name(It->second.type);
  }
  return "";
}

// The same checks for a version newer than ONNX 1.12's schemas: its first
// MinIn inputs are required, the rest optional.
llvm::Error Converter::checkNewerArity(const onnx::NodeProto &N,
                                       const NewerOpVersion &V,
                                       const std::string &Where) {
  int NumIn = N.input_size(), NumOut = N.output_size();
  std::string Version = N.op_type() + "-" + std::to_string(V.Since);
  if (NumIn < V.MinIn || NumIn > V.MaxIn)
    return err(Where + ": has " + llvm::Twine(NumIn) + " inputs; " + Version +
               " takes " + llvm::Twine(V.MinIn) + " to " +
               llvm::Twine(V.MaxIn));
  if (NumOut < V.MinOut || NumOut > V.MaxOut)
    return err(Where + ": has " + llvm::Twine(NumOut) + " outputs; " + Version +
               " produces " + llvm::Twine(V.MinOut) + " to " +
               llvm::Twine(V.MaxOut));
  for (int I = 0; I < V.MinIn; ++I)
    if (N.input(I).empty())
      return err(Where + ": required input " + llvm::Twine(I) + " of " +
                 Version + " is empty");
  return llvm::Error::success();
}

llvm::Error Converter::convertNode(const onnx::NodeProto &N, size_t Index) {
  std::string Where = (N.name().empty() ? "node #" + std::to_string(Index)
                                        : "node '" + N.name() + "'") +
                      " (" + N.op_type() + ")" + ScopeWhere;
  CurrentNode = Where;
  std::string Domain = N.domain() == "ai.onnx" ? "" : N.domain();
  // Inside a function, an attribute may stand for the call's: the node (a
  // call too) is converted with the call's values in their place.
  if (llvm::any_of(N.attribute(), [](const onnx::AttributeProto &A) {
        return !A.ref_attr_name().empty();
      })) {
    auto Resolved = resolveAttributeRefs(N, Where);
    if (!Resolved)
      return Resolved.takeError();
    return convertNode(*Resolved, Index);
  }
  // A model-local function of that name is called, even over a standard
  // op's (as ONNX Runtime does).
  if (const onnx::FunctionProto *F = findFunction(Domain, N.op_type()))
    return convertCall(N, *F, Index, Where);
  auto OpsetIt = OpsetByDomain.find(Domain);
  if (OpsetIt == OpsetByDomain.end())
    return err(Where + ": domain '" + Domain +
               "' has no opset import in the model");

  const onnx::OpSchema *Schema = onnx::OpSchemaRegistry::Schema(
      N.op_type(), static_cast<int>(OpsetIt->second), Domain);
  // Past opset 17, ONNX 1.12's schema may be an older version than the one
  // in force (NewerOpsets.h).
  const NewerOpVersion *Newer =
      Domain.empty() ? newerOpVersion(N.op_type(), OpsetIt->second) : nullptr;
  // ONNX Runtime's own ops (ContribOps.h): read where ONNX has no schema.
  const NewerOpVersion *Contrib =
      Schema || Newer ? nullptr : contribOp(Domain, N.op_type());
  if (Contrib) {
    if (llvm::Error E = checkNewerArity(N, *Contrib, Where))
      return E;
    if (Contrib->Function)
      return convertContribOp(N, Index, Where);
  } else if (!Schema && !Newer && Domain == ContribDomain) {
    return unsupported(
        Where + ": unsupported: ONNX Runtime contrib op '" + N.op_type() +
        "' (domain com.microsoft); oomplan reads " + contribOpNames());
  }
  if (Newer && Newer->Refused)
    return unsupported(Where + ": unsupported: " + N.op_type() + "-" +
                       llvm::Twine(Newer->Since) + " (" + Newer->Refused + ")");
  if (Newer && Newer->MinIn != -1) {
    if (llvm::Error E = checkNewerArity(N, *Newer, Where))
      return E;
  } else if (!Schema && !Contrib) {
    return unsupported(Where + ": unsupported: unknown op '" + N.op_type() +
                       "' in domain '" + (Domain.empty() ? "ai.onnx" : Domain) +
                       "' at opset " + llvm::Twine(OpsetIt->second));
  } else if (Schema) {
    if (llvm::Error E = checkArity(N, *Schema, Where))
      return E;
  }
  // Attribute types against ONNX 1.12's schema when it is the version in
  // force (a newer version may have changed an attribute).
  if (Schema && !Newer)
    if (std::string Bad = checkAttributeTypes(N, *Schema); !Bad.empty())
      return err(Where + ": " + Bad);
  if (Newer && Newer->Function)
    return convertStandardFunction(N, Index, Where);
  if (Domain.empty() && N.op_type() == "If")
    return convertIf(N, Index, Where);
  if (Domain.empty() && N.op_type() == "Loop")
    return convertLoop(N, Index, Where);
  if (Domain.empty() && N.op_type() == "Scan")
    return convertScan(N, Index, Where);
  if (Domain.empty() && isSequenceOp(N.op_type()))
    return convertSequenceOp(N, Index, Where);
  NodeDesc D;
  D.Name = N.name().empty() && Scopes.empty() ? "" : nodeName(N, Index);
  D.OpType = N.op_type();
  // A contrib op with a node of its own (MatMulNBits) joins the default
  // domain's ops, where oomplan's passes look up rules and kernels.
  D.Domain = Contrib ? "" : Domain;
  for (const std::string &In : N.input()) {
    // Checked here: GraphBuilder would name a branch's node by its place
    // in the flat graph, and cannot tell a branch's value from an outer one.
    if (!In.empty())
      if (llvm::Error E = checkVisible(In, Where))
        return E;
    D.Inputs.push_back(In.empty() ? In : resolve(In));
  }
  // A sequence is a list of tensors only the importer sees
  // (ConvertSequence.cpp): an Identity of one is the same list, any other
  // op cannot read it.
  for (size_t I = 0; I < D.Inputs.size(); ++I) {
    auto Seq = Sequences.find(D.Inputs[I]);
    if (Seq == Sequences.end())
      continue;
    if (D.OpType != "Identity" || !Domain.empty() || N.output(0).empty())
      return unsupported(Where + ": unsupported: input '" + N.input(I) +
                         "' is a sequence, which only the sequence ops, "
                         "Identity and Loop may read");
    std::vector<std::string> List = Seq->second;
    Sequences[define(N.output(0))] = std::move(List);
    return llvm::Error::success();
  }
  for (const std::string &Out : N.output())
    D.Outputs.push_back(Out.empty() ? Out : define(Out));
  if (!Scopes.empty() && N.op_type() == "Constant")
    D.SourceNode = std::make_shared<const std::string>(N.SerializeAsString());
  for (const onnx::AttributeProto &A : N.attribute()) {
    auto Attr = convertAttr(A, Where);
    if (!Attr)
      return Attr.takeError();
    if (Attr->Kind == AttrKind::Graph)
      return unsupported(Where + ": unsupported: attribute '" + A.name() +
                         "' holds a subgraph, which is not supported yet");
    D.Attrs.push_back(std::move(*Attr));
  }
  addNode(std::move(D));
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Graph>>
Converter::run(const onnx::ModelProto &M) {
  std::vector<OpsetImport> Opsets;
  for (const onnx::OperatorSetIdProto &O : M.opset_import()) {
    std::string Domain = O.domain() == "ai.onnx" ? "" : O.domain();
    OpsetByDomain[Domain] = O.version();
    Opsets.push_back({Domain, O.version()});
  }
  // IR version 3 and older had no opset_import for the default domain.
  if (!OpsetByDomain.count("") && M.opset_import_size() == 0)
    OpsetByDomain[""] = 1;
  auto Def = OpsetByDomain.find("");
  if (Def != OpsetByDomain.end() &&
      (Def->second < 1 || Def->second > MaxSupportedOpset))
    return unsupported("unsupported: default-domain opset " +
                       llvm::Twine(Def->second) +
                       "; oomplan supports opsets 1 to " +
                       llvm::Twine(MaxSupportedOpset) + " (ONNX 1.20)");
  const onnx::GraphProto &GP = M.graph();
  recordFunctions(M);
  reserveTopLevelNames(GP);
  B.setModelInfo(GP.name(), M.ir_version(), M.producer_name(), Opsets);
  for (const onnx::ValueInfoProto &VI : GP.input()) {
    if (VI.type().has_tensor_type() && VI.type().tensor_type().has_shape()) {
      std::vector<int64_t> &Dims = InputDims[VI.name()];
      for (const auto &Dim : VI.type().tensor_type().shape().dim())
        Dims.push_back(
            Dim.has_dim_value() && Dim.dim_value() >= 0 ? Dim.dim_value() : -1);
    }
    auto D = convertValueInfo(VI, /*RequireTensor=*/true);
    if (!D)
      return D.takeError();
    if (llvm::Error E = B.addInput(std::move(*D)))
      return E;
  }
  if (llvm::Error E = convertWeights(GP))
    return E;
  for (int I = 0; I < GP.node_size(); ++I)
    if (llvm::Error E = convertNode(GP.node(I), I))
      return E;
  CurrentNode.clear();
  for (const onnx::ValueInfoProto &VI : GP.value_info()) {
    auto D = convertValueInfo(VI, /*RequireTensor=*/false);
    if (!D)
      return D.takeError();
    B.addValueInfo(std::move(*D));
  }
  for (const onnx::ValueInfoProto &VI : GP.output()) {
    if (!TopLevel.count(VI.name()) && Taken.count(VI.name()))
      return err("graph output '" + VI.name() +
                 "' is defined only inside an If branch, which the graph "
                 "around it cannot read");
    if (Sequences.count(VI.name()))
      return unsupported("unsupported: graph output '" + VI.name() +
                         "' is a sequence; oomplan plans tensor outputs");
    auto D = convertValueInfo(VI, /*RequireTensor=*/true);
    if (!D)
      return D.takeError();
    B.addOutput(std::move(*D));
  }
  return B.finish();
}

llvm::Expected<std::unique_ptr<Graph>>
oomplan::convertModelProto(const onnx::ModelProto &Model, llvm::StringRef Name,
                           std::string &CurrentNode,
                           const ImportOptions &Opts) {
  Converter C(Name, CurrentNode, Opts);
  return C.run(Model);
}
