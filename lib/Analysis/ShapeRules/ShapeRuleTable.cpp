//===- ShapeRuleTable.cpp - the one table of shape rules ------------------===//
//
// Every family file adds its ops here; later families may not override
// earlier ones (asserted), so each op has exactly one rule.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"

using namespace oomplan;
using namespace oomplan::shapes;

const RuleTable &shapes::shapeRuleTable() {
  static const RuleTable Table = [] {
    RuleTable T;
    for (void (*Add)(RuleTable &) :
         {addElementwiseRules, addBroadcastRules, addNormalizationRules,
          addShapeOpRules, addReshapeRules, addIndexingRules, addMatMulRules,
          addConvPoolRules, addReduceRules, addRecurrentRules,
          addDataDependentRules, addMiscRules}) {
      RuleTable Family;
      Add(Family);
      for (auto &E : Family) {
        bool Inserted = T.try_emplace(E.getKey(), E.getValue()).second;
        assert(Inserted && "op registered by two families");
        (void)Inserted;
      }
    }
    return T;
  }();
  return Table;
}
