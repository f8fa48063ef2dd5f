// The cuda EP without a GPU: architectures, declines, claims for a target architecture,
// chain fusion, NVRTC output and EPContext blob validation. Built only with the CUDA Toolkit.
#ifdef NXRT_HAVE_CUDA
#include <catch2/catch.hpp>

#include <cstring>

#include "cuda/blas.h"
#include "cuda/context_blob.h"
#include "cuda/cuda_provider.h"
#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/ep/epcontext.h"

using namespace nxrt;
using namespace nxrt::cuda;

namespace {

std::unique_ptr<ExecutionProvider> cuda_for(std::string arch) {
  EpConfig config;
  config.options[std::string(kTargetArchOption)] = std::move(arch);
  auto ep = CudaProvider::create(config);
  INFO((ep ? std::string() : ep.error().render()));
  REQUIRE(ep);
  return std::move(*ep);
}

std::string claim_reason(const ExecutionProvider& ep, const Graph& g, NodeId n) {
  KernelMatch m = ep.claim(NodeContext(g, g.node(n)));
  return m ? "claimed" : m.reason();
}

// x -> Add(b) -> Relu -> Mul(x): one chain; its result also feeds Sigmoid and Tanh, which
// start chains of their own.
test::GraphBuilder chain_graph(DType dtype) {
  test::GraphBuilder b;
  b.input("x", dtype, {2, 4});
  b.constant("b", dtype == DType::kFloat16 ? Tensor::empty(DType::kFloat16, {4}) : Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  b.node("add", "Add", {"x", "b"}, {"a"}, dtype, {2, 4});
  b.node("relu", "Relu", {"a"}, {"r"}, dtype, {2, 4});
  b.node("mul", "Mul", {"r", "x"}, {"m"}, dtype, {2, 4});
  b.node("sigmoid", "Sigmoid", {"m"}, {"s"}, dtype, {2, 4});
  b.node("tanh", "Tanh", {"m"}, {"t"}, dtype, {2, 4});
  b.output("s");
  b.output("t");
  b.finish();
  return b;
}

}  // namespace

TEST_CASE("cuda architectures: names, parsing and which code runs where", "[cuda]") {
  CHECK(parse_arch("sm_90")->sm() == "sm_90");
  CHECK(parse_arch("compute_86")->compute() == "compute_86");
  CHECK(parse_arch("120")->sm() == "sm_120");
  auto bad = parse_arch("hopper");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::kUsage);
  CHECK(bad.error().what == "'hopper' is not a GPU architecture");

  const GpuArch sm80{8, 0}, sm86{8, 6}, sm89{8, 9}, sm90{9, 0};
  CHECK(*match_arch(sm90, true, sm90, "H100") == ArchMatch::kCubin);
  CHECK(*match_arch(sm86, false, sm89, "L4") == ArchMatch::kCubin);      // same major, newer minor
  CHECK(*match_arch(sm80, true, sm90, "H100") == ArchMatch::kPtxJit);    // newer major: the PTX
  auto refused = match_arch(sm90, true, sm80, "NVIDIA A100");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().what == "the cuda EPContext blob was compiled for sm_90, this GPU is sm_80 (NVIDIA A100)");
  CHECK(refused.error().why == "its cubin runs on sm_9x GPUs from sm_90 on, and its PTX (compute_90) cannot be compiled for an older GPU");
  CHECK(refused.error().how == "recompile with nxrt compile-epcontext --ep cuda --target-arch sm_80");
  auto no_ptx = match_arch(sm80, false, sm90, "H100");
  REQUIRE_FALSE(no_ptx);
  CHECK(no_ptx.error().why == "its cubin runs on sm_8x GPUs from sm_80 on, and it holds no PTX");
}

TEST_CASE("cuda EP without a device declines every node with the driver's reason", "[cuda]") {
  auto created = CudaProvider::create(EpConfig{});
  REQUIRE(created);
  const ExecutionProvider& ep = **created;
  if (ep.info().available) {
    WARN("a CUDA device is visible (" << ep.info().device_name << "): nothing to decline");
    return;
  }
  const std::string& reason = ep.info().unavailable_reason;
  INFO(reason);
  CHECK((reason.starts_with("no CUDA driver: ") || reason.starts_with("no usable CUDA device: cuInit returned ")));
  auto b = chain_graph(DType::kFloat32);
  for (const Node& n : b.graph.nodes) CHECK(claim_reason(ep, b.graph, n.id) == "the cuda EP is unavailable: " + reason);
  CHECK_FALSE(dynamic_cast<CudaProvider&>(**created).compile(test::whole_graph(b.graph, "cuda")));
}

TEST_CASE("cuda bfloat16 products are claimed for sm_80 and newer only (cuBLASLt)", "[cuda]") {
  test::GraphBuilder b;
  b.input("a", DType::kBFloat16, {2, 4});
  b.input("b", DType::kBFloat16, {4, 3});
  const NodeId matmul = b.node("mm", "MatMul", {"a", "b"}, {"y"}, DType::kBFloat16, {2, 3});
  const NodeId relu = b.node("relu", "Relu", {"a"}, {"r"}, DType::kBFloat16, {2, 4});
  b.finish();
  CHECK(claim_reason(*cuda_for("sm_80"), b.graph, matmul) == "claimed");
  CHECK(claim_reason(*cuda_for("sm_75"), b.graph, matmul) ==
        "MatMul: bfloat16 products need sm_80 or newer (cuBLASLt); the target is sm_75");
  // nxrt's own kernels convert bfloat16 themselves, on any architecture.
  CHECK(claim_reason(*cuda_for("sm_75"), b.graph, relu) == "claimed");
}

TEST_CASE("cuda claims opset 6 models where their legacy attributes mean what the kernels do", "[cuda]") {
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3, 4, 5});
  b.input("tail", DType::kFloat32, {4, 5});
  b.input("per_channel", DType::kFloat32, {3});
  auto node_at_opset_6 = [&](const std::string& name, const std::string& op, std::initializer_list<std::string> inputs,
                             AttributeMap attributes) {
    const NodeId id = b.node(name, op, inputs, {name + "_y"}, DType::kFloat32, {2, 3, 4, 5});
    b.graph.nodes[static_cast<std::size_t>(id)].opset = 6;
    b.graph.nodes[static_cast<std::size_t>(id)].attributes = std::move(attributes);
    return id;
  };
  // broadcast=1 matches input 1 against input 0's trailing dims, or from `axis` on.
  const NodeId trailing = node_at_opset_6("trailing", "Add", {"x", "tail"}, test::attrs({{"broadcast", int64_t{1}}}));
  const NodeId at_2 =
      node_at_opset_6("at_2", "Mul", {"x", "tail"}, test::attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{2}}}));
  const NodeId at_1 =
      node_at_opset_6("at_1", "Sub", {"x", "tail"}, test::attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{1}}}));
  const std::initializer_list<std::string> bn_inputs = {"x", "per_channel", "per_channel", "per_channel", "per_channel"};
  const NodeId bn_test = node_at_opset_6("bn_test", "BatchNormalization", bn_inputs, test::attrs({{"is_test", int64_t{1}}}));
  const NodeId bn_train = node_at_opset_6("bn_train", "BatchNormalization", bn_inputs, {});  // is_test defaults to 0
  const NodeId bn_positions = node_at_opset_6("bn_positions", "BatchNormalization", bn_inputs,
                                              test::attrs({{"is_test", int64_t{1}}, {"spatial", int64_t{0}}}));
  // Pad's attribute form: its value is the kernel's fill, for the float types it is defined for.
  b.input("h", DType::kFloat16, {2, 3, 4, 5});
  b.input("i", DType::kInt32, {2, 3, 4, 5});
  const AttributeMap pad_attrs = test::attrs({{"pads", std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1}}, {"value", 2.f}});
  const NodeId pad = node_at_opset_6("pad", "Pad", {"x"}, pad_attrs);
  const NodeId pad16 = node_at_opset_6("pad16", "Pad", {"h"}, pad_attrs);
  const NodeId pad_int = node_at_opset_6("pad_int", "Pad", {"i"}, pad_attrs);
  b.finish();
  auto ep = cuda_for("sm_90");
  CHECK(claim_reason(*ep, b.graph, trailing) == "claimed");
  CHECK(claim_reason(*ep, b.graph, at_2) == "claimed");
  CHECK(claim_reason(*ep, b.graph, at_1) ==
        "Sub: broadcast=1 with axis=1 (opset 6) matches input 1 against input 0 from dim 1, not its trailing dims; "
        "the cuda EP broadcasts numpy-style only");
  CHECK(claim_reason(*ep, b.graph, bn_test) == "claimed");
  CHECK(claim_reason(*ep, b.graph, bn_train) ==
        "BatchNormalization: is_test=0 at opset 6 asks for batch statistics; the cuda EP computes them with "
        "training_mode=1 (opset 14 on)");
  CHECK(claim_reason(*ep, b.graph, bn_positions) ==
        "BatchNormalization: spatial=0 (statistics per channel and position, opset 6) is not supported by the cuda EP");
  CHECK(claim_reason(*ep, b.graph, pad) == "claimed");
  CHECK(claim_reason(*ep, b.graph, pad16) == "claimed");
  CHECK(claim_reason(*ep, b.graph, pad_int) ==
        "Pad: value=2 at opset 6 for int32 data; this form of Pad is defined for float16, float and double (opset 11 "
        "takes the value as an input of the data's type)");
}

TEST_CASE("cuda claims GroupNormalization, LpNormalization, LpPool and the bitwise ops, naming what it declines", "[cuda]") {
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 6, 4, 5});
  b.input("per_group", DType::kFloat32, {3});
  b.input("per_channel", DType::kFloat32, {6});
  b.input("i", DType::kInt16, {4});
  auto node = [&](const std::string& name, const std::string& op, std::initializer_list<std::string> inputs, int64_t opset,
                  AttributeMap attributes, DType out = DType::kFloat32) {
    const NodeId id = b.node(name, op, inputs, {name + "_y"}, out, {});
    b.graph.nodes[static_cast<std::size_t>(id)].opset = opset;
    b.graph.nodes[static_cast<std::size_t>(id)].attributes = std::move(attributes);
    return id;
  };
  const AttributeMap three_groups = test::attrs({{"num_groups", int64_t{3}}});
  const NodeId gn18 = node("gn18", "GroupNormalization", {"x", "per_group", "per_group"}, 18, three_groups);
  const NodeId gn21 = node("gn21", "GroupNormalization", {"x", "per_channel", "per_channel"}, 21, three_groups);
  const NodeId gn21_per_group = node("gn21_per_group", "GroupNormalization", {"x", "per_group", "per_group"}, 21, three_groups);
  const NodeId no_groups = node("no_groups", "GroupNormalization", {"x", "per_group", "per_group"}, 18, {});
  const NodeId four_groups = node("four_groups", "GroupNormalization", {"x", "per_group", "per_group"}, 18,
                                  test::attrs({{"num_groups", int64_t{4}}}));
  const NodeId stash_double = node("stash_double", "GroupNormalization", {"x", "per_channel", "per_channel"}, 21,
                                   test::attrs({{"num_groups", int64_t{3}}, {"stash_type", int64_t{11}}}));
  const NodeId stash_int = node("stash_int", "GroupNormalization", {"x", "per_channel", "per_channel"}, 21,
                                test::attrs({{"num_groups", int64_t{3}}, {"stash_type", int64_t{7}}}));
  const NodeId l1 = node("l1", "LpNormalization", {"x"}, 22, test::attrs({{"p", int64_t{1}}, {"axis", int64_t{1}}}));
  const NodeId l3 = node("l3", "LpNormalization", {"x"}, 22, test::attrs({{"p", int64_t{3}}}));
  b.input("scalar", DType::kFloat32, {});
  const NodeId l_scalar = node("l_scalar", "LpNormalization", {"scalar"}, 22, test::attrs({{"axis", int64_t{0}}}));
  const NodeId lp_pool = node("lp_pool", "LpPool", {"x"}, 18, test::attrs({{"kernel_shape", std::vector<int64_t>{2, 2}}}));
  const NodeId lp_pool_0 = node("lp_pool_0", "LpPool", {"x"}, 18,
                                test::attrs({{"kernel_shape", std::vector<int64_t>{2, 2}}, {"p", int64_t{0}}}));
  const NodeId global_lp = node("global_lp", "GlobalLpPool", {"x"}, 2, {});
  const NodeId bit_and = node("bit_and", "BitwiseAnd", {"i", "i"}, 18, {}, DType::kInt16);
  const NodeId bit_not = node("bit_not", "BitwiseNot", {"i"}, 18, {}, DType::kInt16);
  const NodeId bit_float = node("bit_float", "BitwiseOr", {"per_group", "per_group"}, 18, {});
  b.finish();
  auto ep = cuda_for("sm_90");
  for (NodeId id : {gn18, gn21, stash_double, l1, lp_pool, global_lp, bit_and, bit_not}) {
    INFO(b.graph.node(id).name);
    CHECK(claim_reason(*ep, b.graph, id) == "claimed");
  }
  CHECK(claim_reason(*ep, b.graph, gn21_per_group) ==
        "GroupNormalization-21: input 1 has 3 values; expected 6 (one per channel)");
  CHECK(claim_reason(*ep, b.graph, no_groups) ==
        "GroupNormalization: attribute num_groups is required and must be positive");
  CHECK(claim_reason(*ep, b.graph, four_groups) == "GroupNormalization: 6 channels do not split into 4 groups");
  CHECK(claim_reason(*ep, b.graph, stash_int) ==
        "GroupNormalization: stash_type=7 is not supported by the cuda EP (it computes in float, stash_type=1, or double, "
        "11)");
  CHECK(claim_reason(*ep, b.graph, l3) == "LpNormalization: p 3 is not supported; the op defines p = 1 or 2");
  // A scalar has no axis; the step could not run it.
  CHECK(claim_reason(*ep, b.graph, l_scalar) == "LpNormalization: axis 0 is out of range for X of rank 0");
  CHECK(claim_reason(*ep, b.graph, lp_pool_0) == "LpPool: p 0 is not positive");
  CHECK(claim_reason(*ep, b.graph, bit_float) ==
        "BitwiseOr: input 0 is float; the cuda EP runs 8- to 64-bit integers only");
}

// lib checks the geometry of these two (nxrt/ep/center_crop_pad.h, affine_grid.h) for both
// EPs: what the step would refuse is declined when the claim can see it.
TEST_CASE("cuda declines CenterCropPad and AffineGrid whose static inputs do not fit", "[cuda]") {
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 6, 4});
  b.input("theta", DType::kFloat32, {1, 2, 4});
  b.constant("two_sizes", test::int64s({3, 3}));
  b.constant("negative", test::int64s({1, 2, -3}));
  b.constant("size_3d", test::int64s({1, 1, 2, 3, 4}));
  b.constant("size_short", test::int64s({1, 2, 3}));
  auto node = [&](const std::string& name, const std::string& op, std::initializer_list<std::string> inputs, int64_t opset) {
    const NodeId id = b.node(name, op, inputs, {name + "_y"});
    b.graph.nodes[static_cast<std::size_t>(id)].opset = opset;
    return id;
  };
  const NodeId crop_axes = node("crop_axes", "CenterCropPad", {"x", "two_sizes"}, 18);
  const NodeId crop_last = node("crop_last", "CenterCropPad", {"x", "two_sizes"}, 18);
  b.graph.nodes[static_cast<std::size_t>(crop_last)].attributes = test::attrs({{"axes", std::vector<int64_t>{1, -1}}});
  const NodeId crop_negative = node("crop_negative", "CenterCropPad", {"x", "negative"}, 18);
  const NodeId grid_theta = node("grid_theta", "AffineGrid", {"theta", "size_3d"}, 20);
  const NodeId grid_short = node("grid_short", "AffineGrid", {"x", "size_short"}, 20);
  b.finish();
  auto ep = cuda_for("sm_90");
  CHECK(claim_reason(*ep, b.graph, crop_last) == "claimed");
  CHECK(claim_reason(*ep, b.graph, crop_axes) ==
        "CenterCropPad: shape has 2 values for 3 axes; fix the node's shape input or its axes attribute");
  CHECK(claim_reason(*ep, b.graph, crop_negative) ==
        "CenterCropPad: size -3 for axis 2 is negative; fix the node's shape input");
  CHECK(claim_reason(*ep, b.graph, grid_theta) == "AffineGrid: theta has shape [1,2,4]; expected [N, 2, 3] or [N, 3, 4]");
  CHECK(claim_reason(*ep, b.graph, grid_short) ==
        "AffineGrid: size has 3 values; expected [N, C, H, W] or [N, C, D, H, W]");
}

TEST_CASE("cuda claims the transformer ops of opsets 23 and 24, naming what it declines", "[cuda]") {
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3, 8});
  b.input("xd", DType::kFloat64, {2, 3, 8});
  b.input("q4d", DType::kFloat64, {1, 2, 3, 8});
  b.input("scale", DType::kFloat32, {8});
  b.input("q4", DType::kFloat32, {1, 2, 3, 8});
  b.input("cos", DType::kFloat32, {6, 4});
  b.input("ids", DType::kInt64, {1, 3});
  b.input("mask", DType::kInt32, {3, 3});
  auto node = [&](const std::string& name, const std::string& op, std::initializer_list<std::string> inputs,
                  AttributeMap attributes) {
    const NodeId id = b.node(name, op, inputs, {name + "_y"});
    b.graph.nodes[static_cast<std::size_t>(id)].opset = 23;
    b.graph.nodes[static_cast<std::size_t>(id)].attributes = std::move(attributes);
    return id;
  };
  const NodeId rms = node("rms", "RMSNormalization", {"x", "scale"}, {});
  const NodeId rms_stash = node("rms_stash", "RMSNormalization", {"x", "scale"}, test::attrs({{"stash_type", int64_t{16}}}));
  const NodeId rope = node("rope", "RotaryEmbedding", {"q4", "cos", "cos", "ids"}, {});
  const NodeId rope_double = node("rope_double", "RotaryEmbedding", {"q4d", "cos", "cos", "ids"}, {});
  const NodeId rope_cache = node("rope_cache", "RotaryEmbedding", {"q4", "cos", "cos", "ids"},
                                 test::attrs({{"rotary_embedding_dim", int64_t{4}}}));
  const NodeId mha = node("mha", "Attention", {"q4", "q4", "q4"}, test::attrs({{"is_causal", int64_t{1}}}));
  const NodeId packed = node("packed", "Attention", {"x", "x", "x"}, test::attrs({{"q_num_heads", int64_t{2}},
                                                                                 {"kv_num_heads", int64_t{1}}}));
  const NodeId int_mask = node("int_mask", "Attention", {"q4", "q4", "q4", "mask"}, {});
  const NodeId double_attention = node("double_attention", "Attention", {"xd", "xd", "xd"},
                                       test::attrs({{"q_num_heads", int64_t{2}}, {"kv_num_heads", int64_t{2}}}));
  b.input("lengths", DType::kInt64, {1});
  const NodeId padded = node("padded", "Attention", {"q4", "q4", "q4", "", "", "", "lengths"}, {});
  const NodeId padded_with_past = node("padded_with_past", "Attention", {"q4", "q4", "q4", "", "q4", "q4", "lengths"}, {});
  const NodeId scatter = node("scatter", "TensorScatter", {"q4", "q4", "lengths"}, {});
  const NodeId scatter_batch = node("scatter_batch", "TensorScatter", {"q4", "q4"}, test::attrs({{"axis", int64_t{0}}}));
  for (NodeId id : {padded, padded_with_past, scatter, scatter_batch}) b.graph.nodes[static_cast<std::size_t>(id)].opset = 24;
  b.finish();
  auto ep = cuda_for("sm_90");
  for (NodeId id : {rms, rope, mha, padded, scatter}) {
    INFO(b.graph.node(id).name);
    CHECK(claim_reason(*ep, b.graph, id) == "claimed");
  }
  CHECK(claim_reason(*ep, b.graph, rms_stash) ==
        "RMSNormalization: stash_type 16 is not supported by the cuda EP (it computes the mean square in float, "
        "stash_type 1, or double, 11)");
  CHECK(claim_reason(*ep, b.graph, rope_double) ==
        "RotaryEmbedding: input 0 is double; the cuda EP runs float, float16 and bfloat16 only");
  CHECK(claim_reason(*ep, b.graph, rope_cache) ==
        "RotaryEmbedding: cos_cache and sin_cache have shape [6,4]; expected [6,2]; fix the shapes of the node's "
        "inputs or its num_heads and rotary_embedding_dim");
  CHECK(claim_reason(*ep, b.graph, packed) ==
        "Attention: Q [2,3,8], K [2,3,8] and V [2,3,8] do not fit together; fix the shapes of the node's inputs or "
        "its q_num_heads and kv_num_heads");
  CHECK(claim_reason(*ep, b.graph, int_mask) == "Attention: attn_mask has type int32; expected bool or Q's type float");
  CHECK(claim_reason(*ep, b.graph, double_attention) ==
        "Attention: input 0 is double; the cuda EP runs float, float16 and bfloat16 only");
  CHECK(claim_reason(*ep, b.graph, padded_with_past) ==
        "Attention: nonpad_kv_seqlen (an external cache's valid lengths) cannot be used with past_key and past_value");
  CHECK(claim_reason(*ep, b.graph, scatter_batch) ==
        "TensorScatter: axis 0 of a rank-4 past_cache must name a dim after the batch (dim 0)");
}

TEST_CASE("cuda claims ONNX Runtime's contrib ops, naming what it declines", "[cuda]") {
  test::GraphBuilder b;
  b.input("x", DType::kFloat16, {2, 3, 8});
  b.input("w", DType::kFloat16, {8, 24});
  b.input("kv", DType::kFloat16, {2, 3, 4});
  b.input("q32", DType::kFloat32, {2, 3, 8});
  b.input("lengths", DType::kInt32, {2});
  b.input("total", DType::kInt32, {});
  b.input("positions", DType::kInt64, {2, 3});
  b.input("packed", DType::kUInt8, {6, 1, 8});
  b.input("scales", DType::kFloat32, {6});
  auto node = [&](const std::string& name, const std::string& op, std::initializer_list<std::string> inputs,
                  AttributeMap attributes) {
    const NodeId id = b.node(name, op, inputs, {name + "_y"});
    Node& n = b.graph.nodes[static_cast<std::size_t>(id)];
    n.domain = "com.microsoft", n.opset = 1, n.attributes = std::move(attributes);
    return id;
  };
  const AttributeMap two_heads = test::attrs({{"num_heads", int64_t{2}}});
  const AttributeMap gqa_heads = test::attrs({{"num_heads", int64_t{2}}, {"kv_num_heads", int64_t{1}}});
  const AttributeMap nbits = test::attrs({{"K", int64_t{8}}, {"N", int64_t{6}}, {"block_size", int64_t{16}}});
  const NodeId attention = node("attention", "Attention", {"x", "w"}, two_heads);
  const NodeId rotary_attention = node("rotary_attention", "Attention", {"x", "w"},
                                       test::attrs({{"num_heads", int64_t{2}}, {"do_rotary", int64_t{1}}}));
  const NodeId gqa = node("gqa", "GroupQueryAttention", {"x", "kv", "kv", "", "", "lengths", "total"}, gqa_heads);
  const NodeId gqa_positions = node("gqa_positions", "GroupQueryAttention",
                                    {"x", "kv", "kv", "", "", "lengths", "total", "", "", "positions"}, gqa_heads);
  const NodeId mha = node("mha", "MultiHeadAttention", {"q32", "q32", "q32"}, two_heads);
  const NodeId mha_beam = node("mha_beam", "MultiHeadAttention", {"q32", "q32", "q32", "", "", "", "", "", "total"},
                               two_heads);
  const NodeId matmul_nbits = node("matmul_nbits", "MatMulNBits", {"q32", "packed", "scales"}, nbits);
  const NodeId nbits_3 = node("nbits_3", "MatMulNBits", {"q32", "packed", "scales"},
                              test::attrs({{"K", int64_t{8}}, {"N", int64_t{6}}, {"block_size", int64_t{16}},
                                           {"bits", int64_t{3}}}));
  b.finish();
  auto ep = cuda_for("sm_90");
  for (NodeId id : {attention, gqa, mha, matmul_nbits}) {
    INFO(b.graph.node(id).name);
    CHECK(claim_reason(*ep, b.graph, id) == "claimed");
  }
  CHECK(claim_reason(*ep, b.graph, rotary_attention) ==
        "Attention: do_rotary is not implemented by the cuda EP; write the model with MultiHeadAttention and "
        "RotaryEmbedding");
  CHECK(claim_reason(*ep, b.graph, gqa_positions) ==
        "GroupQueryAttention: position_ids (input 9) is not implemented by the cuda EP");
  CHECK(claim_reason(*ep, b.graph, mha_beam) ==
        "MultiHeadAttention: past_sequence_length (input 8) and cache_indirection (input 9), a shared past and present "
        "buffer for beam search, are not implemented by the cuda EP");
  CHECK(claim_reason(*ep, b.graph, nbits_3) ==
        "MatMulNBits: bits 3; the cuda EP implements 2, 4 and 8 (those ONNX Runtime supports)");
}

TEST_CASE("cuda claims QuantizeLinear-23 and DequantizeLinear-23, naming the precision or output type it lacks", "[cuda]") {
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.input("q", DType::kUInt8, {2, 3});
  b.input("scale", DType::kFloat32, {});
  auto node = [&](const std::string& name, const std::string& op, std::initializer_list<std::string> inputs,
                  AttributeMap attributes) {
    const NodeId id = b.node(name, op, inputs, {name + "_y"});
    b.graph.nodes[static_cast<std::size_t>(id)].opset = 23;
    b.graph.nodes[static_cast<std::size_t>(id)].attributes = std::move(attributes);
    return id;
  };
  const NodeId in_float = node("in_float", "QuantizeLinear", {"x", "scale"}, test::attrs({{"precision", int64_t{1}}}));
  const NodeId in_half = node("in_half", "QuantizeLinear", {"x", "scale"}, test::attrs({{"precision", int64_t{10}}}));
  const NodeId to_half = node("to_half", "DequantizeLinear", {"q", "scale"}, test::attrs({{"output_dtype", int64_t{10}}}));
  const NodeId to_int = node("to_int", "DequantizeLinear", {"q", "scale"}, test::attrs({{"output_dtype", int64_t{6}}}));
  b.finish();
  auto ep = cuda_for("sm_90");
  CHECK(claim_reason(*ep, b.graph, in_float) == "claimed");
  CHECK(claim_reason(*ep, b.graph, to_half) == "claimed");
  CHECK(claim_reason(*ep, b.graph, in_half) ==
        "QuantizeLinear-23: precision 10 (float16) is not supported by the cuda EP; it divides in float (omit precision or "
        "set it to 1)");
  CHECK(claim_reason(*ep, b.graph, to_int) ==
        "DequantizeLinear-23: output_dtype 6 is not supported by the cuda EP; it outputs float, float16 and bfloat16");
}

TEST_CASE("cuda claims the training optimizers where every float input has R's type", "[cuda]") {
  test::GraphBuilder b;
  b.input("r", DType::kFloat32, {});
  b.input("t", DType::kInt64, {});
  b.input("x", DType::kFloat32, {4});
  b.input("x64", DType::kFloat64, {4});
  auto optimizer = [&](const std::string& name, const std::string& op, std::initializer_list<std::string> inputs,
                       std::initializer_list<std::string> outputs, AttributeMap attributes) {
    const NodeId id = b.node(name, op, inputs, outputs, DType::kFloat32, {4});
    Node& n = b.graph.nodes[static_cast<std::size_t>(id)];
    n.domain = "ai.onnx.preview.training";
    n.opset = 1;
    n.attributes = std::move(attributes);
    return id;
  };
  const AttributeMap momentum_attrs = test::attrs(
      {{"alpha", 0.9f}, {"beta", 0.1f}, {"norm_coefficient", 0.f}, {"mode", std::string("nesterov")}});
  const NodeId adam = optimizer("adam", "Adam", {"r", "t", "x", "x", "x", "x"}, {"adam_x", "adam_v", "adam_h"}, {});
  const NodeId mixed = optimizer("mixed", "Adagrad", {"r", "t", "x64", "x64", "x64"}, {"mixed_x"}, {});
  const NodeId momentum = optimizer("momentum", "Momentum", {"r", "t", "x", "x", "x"}, {"momentum_x"}, momentum_attrs);
  const NodeId no_mode = optimizer("no_mode", "Momentum", {"r", "t", "x", "x", "x"}, {"no_mode_x"}, {});
  const NodeId uneven = optimizer("uneven", "Adam", {"r", "t", "x", "x", "x"}, {"uneven_x"}, {});
  b.finish();
  auto ep = cuda_for("sm_90");
  CHECK(claim_reason(*ep, b.graph, adam) == "claimed");
  CHECK(claim_reason(*ep, b.graph, momentum) == "claimed");
  CHECK(claim_reason(*ep, b.graph, mixed) ==
        "Adagrad: input 2 is double and R float; the cuda EP needs every float input of R's type");
  CHECK(claim_reason(*ep, b.graph, no_mode) ==
        "Momentum: the float attributes alpha, beta, norm_coefficient and the string mode are required");
  CHECK(claim_reason(*ep, b.graph, uneven) == "Adam: 5 inputs do not form R, T and 4 groups of n tensors");
}

TEST_CASE("cuda claims for a target architecture name the missing dtype or attribute", "[cuda]") {
  auto ep = cuda_for("sm_90");
  CHECK(ep->info().available);
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {1, 3, 8, 8});
  b.input("h", DType::kFloat16, {1, 3, 8, 8});
  b.input("i", DType::kInt32, {4});
  b.input("shape", DType::kInt64, {2});
  b.constant("w", Tensor::empty(DType::kFloat32, {4, 3, 3, 3}));
  b.constant("per_channel", Tensor::empty(DType::kFloat32, {3}));
  const NodeId relu = b.node("relu", "Relu", {"x"}, {"r"}, DType::kFloat32, {1, 3, 8, 8});
  const NodeId relu16 = b.node("relu16", "Relu", {"h"}, {"r16"}, DType::kFloat16, {1, 3, 8, 8});
  const NodeId add_int = b.node("add_int", "Add", {"i", "i"}, {"ai"}, DType::kInt32, {4});
  const NodeId relu_int = b.node("relu_int", "Relu", {"i"}, {"ri"}, DType::kInt32, {4});
  const NodeId mixed = b.node("mixed", "Add", {"x", "h"}, {"xm"}, DType::kFloat32, {1, 3, 8, 8});
  const NodeId conv = b.node("conv", "Conv", {"x", "w"}, {"c"}, DType::kFloat32, {1, 4, 7, 7});
  b.graph.nodes[static_cast<std::size_t>(conv)].attributes = test::attrs({{"pads", std::vector<int64_t>{0, 0, 1, 1}}});
  const NodeId same = b.node("same", "Conv", {"x", "w"}, {"c2"}, DType::kFloat32, {1, 4, 8, 8});
  b.graph.nodes[static_cast<std::size_t>(same)].attributes = test::attrs({{"auto_pad", std::string("SAME_UPPER")}});
  const NodeId reshape = b.node("reshape", "Reshape", {"x", "shape"}, {"rs"}, DType::kFloat32, {3, 64});
  const NodeId reshape_h = b.node("reshape_h", "Reshape", {"x", "h"}, {"rsh"}, DType::kFloat32, {3, 64});
  const NodeId cast = b.node("cast", "Cast", {"x"}, {"ci"}, DType::kString, {1, 3, 8, 8});
  b.graph.nodes[static_cast<std::size_t>(cast)].attributes = test::attrs({{"to", int64_t{8}}});
  const std::initializer_list<std::string> bn_inputs = {"x", "per_channel", "per_channel", "per_channel", "per_channel"};
  const NodeId bn = b.node("bn", "BatchNormalization", bn_inputs, {"bn_y"}, DType::kFloat32, {1, 3, 8, 8});
  b.graph.nodes[static_cast<std::size_t>(bn)].attributes = test::attrs({{"training_mode", int64_t{1}}});
  // Before opset 14, asking for the statistics outputs is what asked for training.
  const NodeId bn13 = b.node("bn13", "BatchNormalization", bn_inputs, {"bn13_y", "bn13_mean"}, DType::kFloat32, {1, 3, 8, 8});
  b.graph.nodes[static_cast<std::size_t>(bn13)].opset = 13;
  const NodeId unknown = b.node("strings", "StringNormalizer", {"x"}, {"e"});
  b.finish();

  CHECK(claim_reason(*ep, b.graph, relu) == "claimed");
  CHECK(claim_reason(*ep, b.graph, relu16) == "claimed");
  CHECK(claim_reason(*ep, b.graph, add_int) == "claimed");
  CHECK(claim_reason(*ep, b.graph, relu_int) == "Relu: input 0 is int32; the cuda EP runs float, float16 and bfloat16 only");
  CHECK(claim_reason(*ep, b.graph, mixed) == "Add: input 1 is float16 but input 0 is float; the cuda EP needs one dtype");
  // Uneven pads run over a padded copy of the input.
  CHECK(claim_reason(*ep, b.graph, conv) == "claimed");
  CHECK(claim_reason(*ep, b.graph, same) == "claimed");
  // A shape computed at run time is read back when the step runs.
  CHECK(claim_reason(*ep, b.graph, reshape) == "claimed");
  CHECK(claim_reason(*ep, b.graph, reshape_h) == "Reshape: input 1 (shape) is float16; the cuda EP reads int32 or int64");
  CHECK(claim_reason(*ep, b.graph, cast) ==
        "Cast: from float to string; the cuda EP casts among float, float16, bfloat16, double, 8- to 64-bit integers, bool, "
        "from opset 19 the float8 types, from 21 int4 and uint4, from 23 float4e2m1, from 24 float8e8m0, from 25 "
        "int2 and uint2");
  CHECK(claim_reason(*ep, b.graph, bn) == "claimed");
  CHECK(claim_reason(*ep, b.graph, bn13) ==
        "BatchNormalization: output 1 (batch statistics) is used at opset 13; the cuda EP computes batch statistics "
        "with training_mode=1 (opset 14 on)");
  CHECK(claim_reason(*ep, b.graph, unknown) ==
        "StringNormalizer: ai.onnx::StringNormalizer (opset 17) is not implemented by the cuda EP; use an EP that lists it in "
        "'nxrt list-eps --ops'");
}

TEST_CASE("cuda MatMul shapes: 1-D operands, batch dims broadcast numpy-style, partial broadcasts expanded", "[cuda]") {
  auto shape = [](Shape a, Shape b) {
    auto r = matmul_shape(a, b);
    INFO((r ? std::string() : r.error().render()));
    REQUIRE(r);
    const MatmulProblem& p = r->problem;
    return std::tuple{r->output, p.m, p.n, p.k, p.batch, p.stride_a, p.stride_b};
  };
  CHECK(shape({2, 3}, {3, 4}) == std::tuple{Shape{2, 4}, 2, 4, 3, 1, 0, 0});
  CHECK(shape({3}, {3, 4}) == std::tuple{Shape{4}, 1, 4, 3, 1, 0, 0});
  CHECK(shape({2, 3}, {3}) == std::tuple{Shape{2}, 2, 1, 3, 1, 0, 0});
  // The rank the broadcast adds is kept.
  CHECK(shape({2, 3}, {1, 3, 4}) == std::tuple{Shape{1, 2, 4}, 2, 4, 3, 1, 0, 0});
  CHECK(shape({1, 1, 2, 3}, {5, 3, 4}) == std::tuple{Shape{1, 5, 2, 4}, 2, 4, 3, 5, 0, 12});
  CHECK(shape({1, 5, 2, 3}, {5, 3, 4}) == std::tuple{Shape{1, 5, 2, 4}, 2, 4, 3, 5, 6, 12});
  CHECK(shape({6, 2, 3}, {3, 4}) == std::tuple{Shape{6, 2, 4}, 2, 4, 3, 6, 6, 0});
  CHECK(shape({2, 0}, {0, 4}) == std::tuple{Shape{2, 4}, 2, 4, 0, 1, 0, 0});
  // A side that broadcasts only some batch dims is marked for a copy with the output's batch;
  // its stride is then the copy's.
  auto both_ways = matmul_shape({2, 1, 2, 3}, {1, 3, 3, 4});
  REQUIRE(both_ways);
  CHECK(both_ways->output == Shape{2, 3, 2, 4});
  CHECK((both_ways->expand_a && both_ways->expand_b));
  CHECK((both_ways->batch_a == Shape{2, 1} && both_ways->batch_b == Shape{1, 3} && both_ways->batch == Shape{2, 3}));
  CHECK((both_ways->problem.batch == 6 && both_ways->problem.stride_a == 6 && both_ways->problem.stride_b == 12));
  auto one_side = matmul_shape({2, 3, 5, 6}, {3, 6, 4});
  REQUIRE(one_side);
  CHECK((!one_side->expand_a && one_side->expand_b && one_side->batch_b == Shape{1, 3}));
  CHECK_FALSE(matmul_shape({2, 3, 2, 3}, {4, 3, 4}));
  CHECK_FALSE(matmul_shape({2, 3}, {4, 5}));
}

TEST_CASE("cuda plans fuse single-use elementwise nodes into one generated kernel", "[cuda]") {
  auto table = make_op_table();
  REQUIRE(table);
  auto b = chain_graph(DType::kFloat32);
  auto plan = build_plan(test::whole_graph(b.graph, "cuda"), **table);
  INFO((plan ? std::string() : plan.error().render()));
  REQUIRE(plan);
  std::vector<std::string> steps;
  for (const auto& s : plan->steps) {
    std::string names;
    for (const Node* n : s->nodes) names += n->name + " ";
    steps.push_back(s->variant() + ": " + names);
  }
  // "m" feeds two nodes, so the first chain ends there.
  CHECK(steps == std::vector<std::string>{"nvrtc:chain_0: add relu mul ", "nvrtc:chain_1: sigmoid ", "nvrtc:chain_2: tanh "});
  CHECK(plan->steps[0]->inputs == std::vector<ValueId>{b.id("x"), b.id("b")});
  CHECK(plan->source.find("extern \"C\" __global__ void chain_0(i64 n, int rank, Dims shape, Dims s0, const float* "
                          "__restrict__ in0, Dims s1, const float* __restrict__ in1, float* __restrict__ out)") !=
        std::string::npos);
}

TEST_CASE("cuda compiles a partition with NVRTC to cubin and PTX and saves both in its blob", "[cuda]") {
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    INFO(dtype_name(dtype));
    auto ep = cuda_for("sm_90");
    auto b = chain_graph(dtype);
    const Partition p = test::whole_graph(b.graph, "cuda");
    auto compiled = ep->compile(p);
    INFO((compiled ? std::string() : compiled.error().render()));
    REQUIRE(compiled);
    auto ctx = dynamic_cast<ContextCapable&>(*ep).save_context(p, **compiled);
    REQUIRE(ctx);
    CHECK(ctx->source == "nxrt.cuda");
    CHECK(ctx->hardware_architecture == "sm_90");
    auto blob = decode_blob(ctx->payload(), "test");
    REQUIRE(blob);
    CHECK(blob->image.arch == GpuArch{9, 0});
    REQUIRE(blob->image.cubin.size() > 4);
    CHECK(std::memcmp(blob->image.cubin.data(), "\x7f" "ELF", 4) == 0);
    CHECK(blob->image.ptx.find(".target sm_90") != std::string::npos);
    CHECK(blob->image.ptx.find(".entry chain_0(") != std::string::npos);
    CHECK(blob->steps == std::vector<std::string>{"nvrtc:chain_0", "nvrtc:chain_1", "nvrtc:chain_2"});
  }
}

TEST_CASE("cuda EPContext blobs: round trip, tampering, truncation, wrong magic", "[cuda]") {
  CudaBlob blob;
  blob.nxrt_version = "0.1.0";
  blob.cuda_version = "13.0";
  blob.partition_name = "cuda_0";
  blob.source_hash = 42;
  blob.steps = {"nvrtc:chain_0", "cublasLt"};
  blob.model_bytes = "model";
  blob.image = {GpuArch{8, 9}, {std::byte{0x7f}, std::byte{'E'}}, ".target sm_89", "13.0"};
  const auto bytes = encode_blob(blob);
  auto back = decode_blob(bytes, "node 'n'");
  REQUIRE(back);
  CHECK(back->image.arch == GpuArch{8, 9});
  CHECK(back->image.cubin == blob.image.cubin);
  CHECK(back->image.ptx == blob.image.ptx);
  CHECK(back->image.nvrtc_version == "13.0");
  CHECK(back->steps == blob.steps);
  CHECK(back->source_hash == 42);

  auto tampered = bytes;
  tampered[tampered.size() / 2] ^= std::byte{1};
  auto t = decode_blob(tampered, "node 'n'");
  REQUIRE_FALSE(t);
  CHECK(t.error().what == "the cuda EPContext payload of node 'n' is corrupted");
  CHECK(t.error().code == ErrorCode::kInvalidInput);

  auto truncated = decode_blob(std::span(bytes).first(bytes.size() - 9), "node 'n'");
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().what == "the cuda EPContext payload of node 'n' is corrupted");

  auto foreign = bytes;
  foreign[4] = std::byte{'D'};
  auto f = decode_blob(foreign, "node 'n'");
  REQUIRE_FALSE(f);
  CHECK(f.error().what == "the payload of node 'n' is not a cuda EPContext blob");
}

TEST_CASE("cuda refuses to load a blob without a device, after validating it", "[cuda]") {
  auto ep = cuda_for("sm_90");
  if (ep->info().device_name.find("no device") == std::string::npos) {
    WARN("a CUDA device is visible: loading is checked by tests/cli/test_cuda.py on it");
    return;
  }
  auto b = chain_graph(DType::kFloat32);
  const Partition p = test::whole_graph(b.graph, "cuda");
  auto compiled = ep->compile(p);
  REQUIRE(compiled);
  auto& capable = dynamic_cast<ContextCapable&>(*ep);
  auto ctx = capable.save_context(p, **compiled);
  REQUIRE(ctx);
  auto loaded = capable.load_context(*ctx, p);
  REQUIRE_FALSE(loaded);
  CHECK(loaded.error().what == "EPContext node 'cuda_0' needs a CUDA device (its kernels are for sm_90)");
  ctx->owned.back() ^= std::byte{1};
  auto bad = capable.load_context(*ctx, p);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what == "the cuda EPContext payload of EPContext node 'cuda_0' is corrupted");
}
#endif  // NXRT_HAVE_CUDA
