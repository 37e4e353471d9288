//===- ShapeRuleTable.cpp - op type to shape rule, from the op table ------===//
//
// Analysis's reading of the op table's shape column: each family file
// supplies the functions of its ShapeRuleIds (an id is supplied once,
// asserted), and every record names the id it uses. The op-type map built
// here is only an index over those records, so an op is added in the op
// table alone (IR/OpTable.h), not here.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"

using namespace oomplan;
using namespace oomplan::shapes;

const RuleTable &shapes::shapeRuleTable() {
  static const RuleTable Table = [] {
    RuleFunctions Fns;
    for (void (*Add)(RuleFunctions &) :
         {addElementwiseRules, addBroadcastRules, addNormalizationRules,
          addShapeOpRules, addReshapeRules, addIndexingRules, addMatMulRules,
          addConvPoolRules, addReduceRules, addRecurrentRules,
          addDataDependentRules, addMiscRules, addControlFlowRules})
      Add(Fns);
    RuleTable T;
    for (const ops::OpInfo &Op : ops::allOps()) {
      // Declared (no rule) and an id that no family supplies both leave the
      // op to its declared shapes; the unit test rejects the second.
      ShapeRule Fn = Fns.get(Op.Shape);
      if (Fn)
        T.try_emplace(Op.Name, Fn);
    }
    return T;
  }();
  return Table;
}
