//===- Float8Test.cpp - the 8-bit floats' codec (Kernels/Float8.h) --------===//
//
// Bit patterns by hand from each format's definition (sign, exponent with
// its bias, mantissa; ONNX Cast-19's tables for what does not fit), and a
// round trip of every code.
//
//===----------------------------------------------------------------------===//
#include "Kernels/Float8.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::runtime;

namespace {
const f8::Format &fmt(ElementType T) { return *f8::formatOf(T); }
uint8_t enc(ElementType T, double X, bool Sat = true) {
  return f8::encode(fmt(T), X, Sat);
}
} // namespace

TEST(Float8, E4M3FN) {
  const ElementType T = ElementType::Float8E4M3FN;
  EXPECT_EQ(enc(T, 1.0), 0x38); // exponent 0 + bias 7 = 0b0111
  EXPECT_EQ(enc(T, -1.0), 0xB8);
  EXPECT_EQ(enc(T, 448), 0x7E);  // 1.110b x 2^8, the largest
  EXPECT_EQ(enc(T, -0.0), 0x80); // negative zero kept
  // 464 is halfway to 480 (odd mantissa 111b): to even, 448.
  EXPECT_EQ(enc(T, 464), 0x7E);
  EXPECT_EQ(enc(T, 465), 0x7E);        // rounds to 480 > 448: saturated
  EXPECT_EQ(enc(T, 465, false), 0x7F); // NaN without saturation
  EXPECT_EQ(enc(T, INFINITY), 0x7E);
  EXPECT_EQ(enc(T, -INFINITY, false), 0xFF);
  EXPECT_EQ(enc(T, NAN), 0x7F);
  EXPECT_EQ(enc(T, std::ldexp(1.0, -9)), 0x01);  // smallest subnormal
  EXPECT_EQ(enc(T, std::ldexp(1.0, -10)), 0x00); // halfway to it: even 0
  EXPECT_EQ(enc(T, 1.0625), 0x38);               // 8.5 eighths: to even 8
  EXPECT_EQ(enc(T, 1.1875), 0x3A);               // 9.5 eighths: to even 10
  EXPECT_TRUE(std::isnan(f8::decode(fmt(T), 0x7F)));
  EXPECT_EQ(f8::decode(fmt(T), 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(f8::decode(fmt(T), 0x7E), 448);
}

TEST(Float8, E4M3FNUZ) {
  const ElementType T = ElementType::Float8E4M3FNUZ;
  EXPECT_EQ(enc(T, 1.0), 0x40); // bias 8
  EXPECT_EQ(enc(T, -1.0), 0xC0);
  EXPECT_EQ(enc(T, 240), 0x7F);  // 1.111b x 2^7, the largest
  EXPECT_EQ(enc(T, -0.0), 0x00); // no negative zero
  // Saturated, as ONNX's reference and ONNX Runtime do (Cast-19's table
  // says NaN).
  EXPECT_EQ(enc(T, INFINITY), 0x7F);
  EXPECT_EQ(enc(T, INFINITY, false), 0x80);
  EXPECT_EQ(enc(T, 1000), 0x7F);
  EXPECT_EQ(enc(T, 1000, false), 0x80);
  EXPECT_TRUE(std::isnan(f8::decode(fmt(T), 0x80)));
}

TEST(Float8, E5M2) {
  const ElementType T = ElementType::Float8E5M2;
  EXPECT_EQ(enc(T, 1.0), 0x3C);   // bias 15
  EXPECT_EQ(enc(T, 57344), 0x7B); // 1.11b x 2^15
  EXPECT_EQ(enc(T, INFINITY), 0x7B);
  EXPECT_EQ(enc(T, INFINITY, false), 0x7C);
  EXPECT_EQ(enc(T, 70000, false), 0x7C);
  EXPECT_EQ(enc(T, -70000, false), 0xFC);
  // 1.111b x 2^15 is halfway between 57344 (odd mantissa 11b) and 2^16:
  // to even, 2^16, past the largest: infinity, or 57344 when saturating.
  EXPECT_EQ(enc(T, 61440, false), 0x7C);
  EXPECT_EQ(enc(T, 61440), 0x7B);
  EXPECT_EQ(f8::decode(fmt(T), 0x7C), INFINITY);
  EXPECT_TRUE(std::isnan(f8::decode(fmt(T), 0x7D)));
  EXPECT_EQ(f8::decode(fmt(T), 0x01), std::ldexp(1.0, -16));
}

TEST(Float8, E5M2FNUZ) {
  const ElementType T = ElementType::Float8E5M2FNUZ;
  EXPECT_EQ(enc(T, 1.0), 0x40);   // bias 16
  EXPECT_EQ(enc(T, 57344), 0x7F); // exponent field 31 is finite here
  EXPECT_EQ(f8::decode(fmt(T), 0x7F), 57344);
  EXPECT_EQ(enc(T, -INFINITY), 0xFF); // -57344
  EXPECT_EQ(enc(T, -INFINITY, false), 0x80);
  EXPECT_EQ(enc(T, -0.0), 0x00);
}

TEST(Float8, EveryCodeRoundTrips) {
  for (ElementType T : {ElementType::Float8E4M3FN, ElementType::Float8E4M3FNUZ,
                        ElementType::Float8E5M2, ElementType::Float8E5M2FNUZ}) {
    for (unsigned B = 0; B < 256; ++B) {
      double V = f8::decode(fmt(T), uint8_t(B));
      if (std::isnan(V))
        continue;
      EXPECT_EQ(enc(T, V, false), B) << elementTypeName(T).str() << " " << B;
    }
  }
}
