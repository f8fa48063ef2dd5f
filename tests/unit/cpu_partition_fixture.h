// x -> Add(x, W) -> a -> Relu -> y as one partition of the cpu EP, with W a constant weight:
// the small case the EPContext and stored-partition tests build on.
#pragma once

#include <memory>
#include <stdexcept>

#include "cpu/cpu_provider.h"
#include "lib_test_util.h"
#include "nxrt/session/claims.h"

namespace nxrt::test {

struct CpuAddReluPartition {
  CpuAddReluPartition() {
    auto created = cpu::CpuProvider::create(EpConfig{1, {}, nullptr});
    if (!created) throw std::runtime_error(created.error().render());
    ep = std::move(*created);
    b.input("x");
    w = b.constant("W", Tensor::from_vector<float>({4}, {1, -1, 0.5f, -4}));
    b.node("add", "Add", {"x", "W"}, {"a"});
    b.node("relu", "Relu", {"a"}, {"y"});
    b.output("y");
    b.finish();
    partition.graph = &b.graph;
    partition.ep = "cpu";
    partition.name = "cpu_0";
    partition.nodes = {0, 1};
    compute_boundary(b.graph, partition);
  }

  std::unique_ptr<ExecutionProvider> ep;
  GraphBuilder b;
  ValueId w = kNoValue;
  Partition partition;
};

}  // namespace nxrt::test
