//===- Reshape.cpp - rules for ops that rearrange without computing -------===//
//
// Reshape, Flatten, Squeeze, Unsqueeze, Expand, Transpose, DepthToSpace and
// SpaceToDepth. The first four keep tracked contents (the element order does
// not change), which is what carries Shape values through Unsqueeze/Concat.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

/// Output 0 with Dims, keeping input 0's contents when tracked.
void setView(RuleContext &Ctx, std::vector<SymExpr> Dims) {
  Ctx.setOutput(0, Ctx.inType(0), std::move(Dims));
  if (Ctx.inValues(0))
    Ctx.setOutputValues(0, *Ctx.inValues(0));
}

llvm::Error reshape(RuleContext &Ctx) {
  std::vector<SymExpr> Target;
  if (Ctx.hasInput(1)) {
    if (!Ctx.inValues(1))
      return Ctx.error("the target shape is computed from data this analysis "
                       "cannot follow");
    Target = *Ctx.inValues(1);
  } else if (std::optional<std::vector<int64_t>> S =
                 Ctx.node().getInts("shape")) { // Opset 1-4.
    Target = toExprs(*S);
  } else {
    return Ctx.error("missing target shape");
  }
  bool AllowZero = Ctx.node().getInt("allowzero", 0) != 0;
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  std::optional<size_t> Infer;
  SymExpr Known = SymExpr::constant(1);
  for (size_t I = 0; I < Target.size(); ++I) {
    std::optional<int64_t> C = Target[I].getConstant();
    if (C == 0 && !AllowZero) {
      if (I >= In.size())
        return Ctx.error("shape entry " + llvm::Twine(I) +
                         " is 0 (copy) but the input has rank " +
                         llvm::Twine(In.size()));
      Target[I] = In[I];
    } else if (C == -1) {
      if (Infer)
        return Ctx.error("more than one -1 in the target shape");
      Infer = I;
      continue;
    } else if (C && *C < -1) {
      return Ctx.error("invalid dim " + llvm::Twine(*C) + " in target shape");
    }
    Known = Known * Target[I];
  }
  if (Infer) {
    SymExpr Total = numElements(In);
    if (Known.getConstant() == 0)
      return Ctx.error("cannot infer the -1 dim next to a 0 dim");
    SymExpr Q = SymExpr::floorDiv(Total, Known);
    std::optional<int64_t> T = Total.getConstant(), K = Known.getConstant();
    if (T && K && *K && *T % *K)
      return Ctx.error("cannot reshape " + llvm::Twine(*T) +
                       " elements into a shape of " + llvm::Twine(*K) +
                       " x -1");
    // Whether the quotient is exact is decided with values, once bound
    // (DimCheck): the symbolic algebra cannot prove every exact one (a
    // subsampled length times its channels), so a warning here would be
    // false on correct graphs.
    Ctx.require(DimConstraint::Kind::Divides, Total, Known,
                "the input's element count and the target's known dims");
    Target[*Infer] = Q;
  } else {
    // Without -1 the element counts must agree: a view of another size
    // would plan a buffer that is not its input's.
    std::optional<int64_t> T = numElements(In).getConstant(),
                           K = Known.getConstant();
    if (T && K && *T != *K)
      return Ctx.error("cannot reshape " + llvm::Twine(*T) +
                       " elements into a shape of " + llvm::Twine(*K));
    Ctx.require(DimConstraint::Kind::Equal, numElements(In), Known,
                "the input's and the target's element counts");
  }
  setView(Ctx, std::move(Target));
  return llvm::Error::success();
}

llvm::Error flatten(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  int64_t Axis = Ctx.node().getInt("axis", 1);
  int64_t R = int64_t(In.size());
  if (Axis < -R || Axis > R)
    return Ctx.error("axis " + llvm::Twine(Axis) + " out of range");
  if (Axis < 0)
    Axis += R;
  setView(Ctx,
          {numElements(In.take_front(Axis)), numElements(In.drop_front(Axis))});
  return llvm::Error::success();
}

llvm::Error squeeze(RuleContext &Ctx) {
  llvm::Expected<std::optional<std::vector<int64_t>>> Axes =
      Ctx.intsAttrOrInput("axes", 1);
  if (!Axes)
    return Axes.takeError();
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  std::vector<bool> Drop(In.size(), false);
  if (*Axes) {
    for (int64_t A : **Axes) {
      llvm::Expected<size_t> X = Ctx.axis(A, In.size());
      if (!X)
        return X.takeError();
      if (In[*X].getConstant() != 1)
        return Ctx.error("cannot squeeze axis " + llvm::Twine(A) +
                         " whose size is not 1");
      Drop[*X] = true;
    }
  } else {
    for (size_t I = 0; I < In.size(); ++I)
      Drop[I] = In[I].getConstant() == 1;
  }
  std::vector<SymExpr> Out;
  for (size_t I = 0; I < In.size(); ++I)
    if (!Drop[I])
      Out.push_back(In[I]);
  setView(Ctx, std::move(Out));
  return llvm::Error::success();
}

llvm::Error unsqueeze(RuleContext &Ctx) {
  llvm::Expected<std::optional<std::vector<int64_t>>> Axes =
      Ctx.intsAttrOrInput("axes", 1);
  if (!Axes)
    return Axes.takeError();
  if (!*Axes)
    return Ctx.error("missing axes");
  size_t R = Ctx.inRank(0) + (*Axes)->size();
  std::vector<bool> Insert(R, false);
  for (int64_t A : **Axes) {
    llvm::Expected<size_t> X = Ctx.axis(A, R);
    if (!X)
      return X.takeError();
    if (Insert[*X])
      return Ctx.error("repeated axis " + llvm::Twine(A));
    Insert[*X] = true;
  }
  std::vector<SymExpr> Out;
  size_t J = 0;
  for (size_t I = 0; I < R; ++I)
    Out.push_back(Insert[I] ? SymExpr::constant(1) : Ctx.inDims(0)[J++]);
  setView(Ctx, std::move(Out));
  return llvm::Error::success();
}

llvm::Error expand(RuleContext &Ctx) {
  if (!Ctx.inValues(1))
    return Ctx.error("the target shape is computed from data this analysis "
                     "cannot follow");
  llvm::Expected<std::vector<SymExpr>> Dims =
      broadcastShapes(Ctx, Ctx.inDims(0), *Ctx.inValues(1));
  if (!Dims)
    return Dims.takeError();
  Ctx.setOutput(0, Ctx.inType(0), *Dims);
  // Contents: only for the common scalar/one-element case.
  std::optional<int64_t> N = constantNumElements(*Dims);
  if (Ctx.inValues(0) && Ctx.inValues(0)->size() == 1 && N &&
      *N <= MaxTrackedElements)
    Ctx.setOutputValues(0, std::vector<SymExpr>(*N, (*Ctx.inValues(0))[0]));
  return llvm::Error::success();
}

llvm::Error transpose(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  std::vector<int64_t> Perm;
  if (std::optional<std::vector<int64_t>> P = Ctx.node().getInts("perm")) {
    Perm = *P;
  } else {
    for (size_t I = In.size(); I-- > 0;)
      Perm.push_back(int64_t(I));
  }
  if (Perm.size() != In.size())
    return Ctx.error("perm has " + llvm::Twine(Perm.size()) +
                     " entries for rank " + llvm::Twine(In.size()));
  std::vector<SymExpr> Out;
  std::vector<bool> Seen(In.size(), false);
  std::vector<size_t> Axes;
  for (int64_t P : Perm) {
    llvm::Expected<size_t> X = Ctx.axis(P, In.size());
    if (!X)
      return X.takeError();
    if (Seen[*X])
      return Ctx.error("perm repeats axis " + llvm::Twine(P));
    Seen[*X] = true;
    Out.push_back(In[*X]);
    Axes.push_back(*X);
  }
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  // A 1-D (or all-ones) transpose keeps the element order.
  if (Ctx.inValues(0) && In.size() <= 1)
    Ctx.setOutputValues(0, *Ctx.inValues(0));
  else if (Ctx.inValues(0))
    if (auto V = transposeValues(*Ctx.inValues(0), In, Axes))
      Ctx.setOutputValues(0, std::move(*V));
  return llvm::Error::success();
}

/// DepthToSpace / SpaceToDepth on NCHW.
llvm::Error depthSpace(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  if (In.size() != 4)
    return Ctx.error("input must be 4-D (NCHW)");
  int64_t B = Ctx.node().getInt("blocksize", 0);
  if (B <= 0)
    return Ctx.error("blocksize must be positive");
  SymExpr BS = SymExpr::constant(B), BB = BS * BS; // Poisoned on overflow.
  // A known dim that the block does not divide is a bad model (the spec
  // requires it; every runtime refuses it), not a floor to round down.
  auto Indivisible = [](const SymExpr &D, int64_t By) {
    std::optional<int64_t> V = D.getConstant();
    return V && By > 0 && *V % By != 0;
  };
  const bool ToSpace = Ctx.node().OpType == "DepthToSpace";
  if (ToSpace && B <= INT32_MAX && Indivisible(In[1], B * B))
    return Ctx.error("channels (" + llvm::Twine(*In[1].getConstant()) +
                     ") are not a multiple of blocksize^2 (" +
                     llvm::Twine(B * B) + ")");
  if (!ToSpace && (Indivisible(In[2], B) || Indivisible(In[3], B)))
    return Ctx.error("height or width is not a multiple of blocksize (" +
                     llvm::Twine(B) + ")");
  if (ToSpace)
    Ctx.setOutput(
        0, Ctx.inType(0),
        {In[0], SymExpr::floorDiv(In[1], BB), In[2] * BS, In[3] * BS});
  else
    Ctx.setOutput(0, Ctx.inType(0),
                  {In[0], In[1] * BB, SymExpr::floorDiv(In[2], BS),
                   SymExpr::floorDiv(In[3], BS)});
  return llvm::Error::success();
}

} // namespace

void shapes::addReshapeRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::Reshape, reshape);
  F.add(ops::ShapeRuleId::Flatten, flatten);
  F.add(ops::ShapeRuleId::Squeeze, squeeze);
  F.add(ops::ShapeRuleId::Unsqueeze, unsqueeze);
  F.add(ops::ShapeRuleId::Expand, expand);
  F.add(ops::ShapeRuleId::Transpose, transpose);
  F.add(ops::ShapeRuleId::DepthSpace, depthSpace);
}
