//===- ElementType.h - tensor element types and their widths ----*- C++ -*-===//
//
// The element types of ONNX 1.12 (TensorProto.DataType), the four 8-bit
// floats of ONNX 1.14 (opset 19) and the 4-bit integers of ONNX 1.16
// (opset 21), with the width of each in bits. Numbering
// follows ONNX so the frontend can convert directly; nothing else in oomplan
// depends on the numbers.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_IR_ELEMENTTYPE_H
#define OOMPLAN_IR_ELEMENTTYPE_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>

namespace oomplan {

/// Element type of a tensor; values equal ONNX's TensorProto.DataType.
enum class ElementType : uint8_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  // ONNX 1.14 (opset 19; FP8 exports such as NVIDIA ModelOpt's). Sized and
  // planned like any byte type; only Cast, CastLike, QuantizeLinear and
  // DequantizeLinear compute with them (isFloatingPoint says false, so that
  // no kernel reads them as another float).
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  // ONNX 1.16 (opset 21): half a byte each, two to a byte, the first in the
  // low bits (ONNX's packing). Sizes round up to whole bytes (tensorBytes);
  // oomplan's executor reads them only in DequantizeLinear (isSubByte).
  UInt4 = 21,
  Int4 = 22,
};

/// Largest element type number oomplan knows (23 and 24, float4e2m1 and
/// float8e8m0, are not).
constexpr unsigned MaxElementTypeNumber = 22;

/// Width of one element in bits; 0 for String and Undefined, which cannot be
/// sized. Bool is stored in one byte, as ONNX and every runtime do.
unsigned elementBits(ElementType Type);

/// Lower-case ONNX text-format name ("float", "int64", "bfloat16", ...).
llvm::StringRef elementTypeName(ElementType Type);

/// True for the integer and bool types whose values shape computations use.
bool isIntegerLike(ElementType Type);

/// True for float, float16, bfloat16 and double.
bool isFloatingPoint(ElementType Type);

/// True for the four 8-bit floats.
bool isFloat8(ElementType Type);

/// True for the types narrower than a byte (int4, uint4).
bool isSubByte(ElementType Type);

/// Bytes of N elements of Type, a sub-byte type's rounded up (ONNX packs
/// them); false on overflow or for types without a width (string).
bool packedBytes(ElementType Type, uint64_t N, uint64_t &Out);

/// Converts an ONNX DataType number; false if it is not one oomplan knows.
bool elementTypeFromNumber(int64_t Number, ElementType &Out);

} // namespace oomplan

#endif
