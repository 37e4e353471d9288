//===- TrainingAttention.h - attention blocks of a training graph -*- C++
//-*-===//
//
// Internal to lib/Transforms. PyTorch 2.x trains attention in one of two
// ways, and they keep very different bytes for the backward:
//
//   eager: softmax(q @ k^T * scale + mask) @ v, op by op (hand-written
//          attention, Hugging Face's attn_implementation="eager"): the
//          seq x seq scores, probabilities and dropout mask are kept;
//   sdpa:  F.scaled_dot_product_attention (nn.MultiheadAttention, and so
//          nn.TransformerEncoderLayer and torchvision's ViT): a fused
//          kernel that keeps q, k, v, its output and one fp32 log-sum-exp
//          per query row, and makes no seq x seq tensor at all.
//
// An ONNX export spells both as the same MatMul/Softmax/MatMul chain. This
// finds each chain and the graph's evidence for sdpa (docs/training.md,
// "Attention"):
//   - the decomposition PyTorch's exporter writes for
//     scaled_dot_product_attention: q and k^T each multiplied by the square
//     root of the scale (a Sqrt) before the product;
//   - nn.MultiheadAttention's packed in-projection: q, k and v are three
//     Slices or Gathers of one tensor (one projection), reached through
//     views only (a Split, GPT-2's packing, is not this evidence).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_TRANSFORMS_TRAININGATTENTION_H
#define OOMPLAN_LIB_TRANSFORMS_TRAININGATTENTION_H

#include "TrainingPatterns.h"
#include "oomplan/Analysis/ShapeInference.h"

namespace oomplan {
namespace training {

/// Why a block was taken to run as scaled_dot_product_attention.
enum class SDPAEvidence : uint8_t {
  None,         ///< No evidence: eager under --attention=auto.
  ExportedSDPA, ///< The exporter's decomposition of the SDPA call.
  PackedMHA,    ///< nn.MultiheadAttention's packed in-projection.
};

struct AttentionBlock {
  /// Pattern "attention", Op "ScaledDotProductAttention"; Inputs q, k, v
  /// (as the block reads them: k may be k^T), Output the block's output,
  /// Nodes every node from the scales of q and k to the last product.
  FusedGroup Group;
  ValueId Scores = NoId; ///< The q @ k^T product, [..., Sq, Sk].
  /// Values the fused kernel never makes: the scaled q and k, the scores
  /// and their scaled and masked forms, the probabilities, the dropout's
  /// output. Their bytes are 0 under sdpa.
  std::vector<ValueId> Interior;
  SDPAEvidence Evidence = SDPAEvidence::None;
  bool HasDropout = false;
};

/// Every Softmax-over-the-last-axis between two MatMuls whose intermediates
/// are read only inside the chain, in node order.
std::vector<AttentionBlock> findAttentionBlocks(const Graph &G,
                                                const ShapeInfo &Shapes);

} // namespace training
} // namespace oomplan

#endif
