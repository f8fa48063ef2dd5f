// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as every EP that runs them reads them:
// the claim checks that do not depend on the EP's dtypes.
#pragma once

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

// Declines a reduction other than none, sum and mean, scores (input 0) of rank below 2, and a
// target (input 1) whose rank is not one less.
KernelMatch check_loss_node(const NodeContext& ctx);

}  // namespace nxrt
