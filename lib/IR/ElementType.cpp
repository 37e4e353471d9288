//===- ElementType.cpp - tensor element types and their widths ------------===//
//
// One table of names and widths, indexed by the ONNX type number.
//
//===----------------------------------------------------------------------===//
#include "oomplan/IR/ElementType.h"

using namespace oomplan;

namespace {
struct TypeInfo {
  const char *Name;
  unsigned Bits;
};
// Indexed by the ONNX DataType number.
constexpr TypeInfo Table[MaxElementTypeNumber + 1] = {
    {"undefined", 0},      {"float", 32},     {"uint8", 8},
    {"int8", 8},           {"uint16", 16},    {"int16", 16},
    {"int32", 32},         {"int64", 64},     {"string", 0},
    {"bool", 8},           {"float16", 16},   {"double", 64},
    {"uint32", 32},        {"uint64", 64},    {"complex64", 64},
    {"complex128", 128},   {"bfloat16", 16},  {"float8e4m3fn", 8},
    {"float8e4m3fnuz", 8}, {"float8e5m2", 8}, {"float8e5m2fnuz", 8},
    {"uint4", 4},          {"int4", 4},
};
} // namespace

unsigned oomplan::elementBits(ElementType Type) {
  return Table[static_cast<unsigned>(Type)].Bits;
}

llvm::StringRef oomplan::elementTypeName(ElementType Type) {
  return Table[static_cast<unsigned>(Type)].Name;
}

bool oomplan::isIntegerLike(ElementType Type) {
  switch (Type) {
  case ElementType::UInt8:
  case ElementType::Int8:
  case ElementType::UInt16:
  case ElementType::Int16:
  case ElementType::Int32:
  case ElementType::Int64:
  case ElementType::UInt32:
  case ElementType::UInt64:
  case ElementType::Bool:
    return true;
  default:
    return false;
  }
}

bool oomplan::isFloatingPoint(ElementType Type) {
  return Type == ElementType::Float || Type == ElementType::Float16 ||
         Type == ElementType::BFloat16 || Type == ElementType::Double;
}

bool oomplan::isFloat8(ElementType Type) {
  return Type == ElementType::Float8E4M3FN ||
         Type == ElementType::Float8E4M3FNUZ ||
         Type == ElementType::Float8E5M2 || Type == ElementType::Float8E5M2FNUZ;
}

bool oomplan::isSubByte(ElementType Type) {
  return Type == ElementType::UInt4 || Type == ElementType::Int4;
}

bool oomplan::packedBytes(ElementType Type, uint64_t N, uint64_t &Out) {
  const unsigned Bits = elementBits(Type);
  if (Bits == 0)
    return false;
  if (Bits % 8 == 0)
    return !__builtin_mul_overflow(N, uint64_t(Bits / 8), &Out);
  uint64_t Total;
  if (__builtin_mul_overflow(N, uint64_t(Bits), &Total) ||
      __builtin_add_overflow(Total, uint64_t(7), &Total))
    return false;
  Out = Total / 8;
  return true;
}

bool oomplan::elementTypeFromNumber(int64_t Number, ElementType &Out) {
  if (Number < 0 || Number > MaxElementTypeNumber)
    return false;
  Out = static_cast<ElementType>(Number);
  return true;
}
