// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool (1-D to 3-D) on oneDNN's pooling,
// read and written in the input's own layout (blocked after a Conv) without reorders. A 1-D or
// 2-D MaxPool on blocked or channels-last data runs nxrt's own loop (native/max_pool.h).
#include <algorithm>
#include <functional>
#include <vector>

#include "native/max_pool.h"
#include "nxrt/ir/window.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::onednn {
namespace {

using dnnl::algorithm;

// One spatial dim in oneDNN's terms: dilation 0 means none, and pad_r is the end padding that
// makes oneDNN's floor rule give ONNX's output size (ceil_mode included).
struct PoolDim {
  int64_t in, out, kernel, stride, dilation, pad_l, pad_r;
  int64_t onnx_pad_r;  // the end padding ONNX counts (count_include_pad)

  int64_t span() const { return (kernel - 1) * (dilation + 1) + 1; }
};

// oneDNN sizes the output floor((in + pad_l + pad_r - span) / stride) + 1: any pad_r in
// [need, need + stride) gives `out`. ONNX's own pad_end is kept when it lies there.
PoolDim to_pool_dim(const WindowDim& d) {
  const int64_t span = (d.kernel - 1) * d.dilation + 1;
  const int64_t need = (d.out - 1) * d.stride + span - d.in - d.pad_begin;
  const int64_t pad_r = std::clamp(d.pad_end, need, need + d.stride - 1);
  return {d.in, d.out, d.kernel, d.stride, d.dilation - 1, d.pad_begin, pad_r, d.pad_end};
}

// The windowed pool's dims for input dims `x` (N, C, spatial...).
Expected<std::vector<PoolDim>> window_dims(const NodeContext& ctx, std::span<const int64_t> x) {
  const std::size_t spatial = x.size() - 2;
  const WindowAttrs attrs = read_window_attrs(ctx.attrs(), spatial);
  auto w = plan_window(attrs, x.subspan(2), attrs.kernel, ctx.node().describe());
  if (!w) return std::unexpected(std::move(w.error()));
  std::vector<PoolDim> dims;
  for (std::size_t i = 3 - spatial; i < 3; ++i) dims.push_back(to_pool_dim((*w)[i]));
  return dims;
}

// The global pools: one window over every spatial dim.
std::vector<PoolDim> global_dims(std::span<const int64_t> x) {
  std::vector<PoolDim> dims;
  for (std::size_t i = 2; i < x.size(); ++i) dims.push_back({x[i], 1, x[i], 1, 0, 0, 0, 0});
  return dims;
}

// Layouts oneDNN 2.6 has JIT pooling kernels for: 8 and 16 channels blocked, channels last.
std::vector<memory::format_tag> faster_pool_layouts(std::size_t rank) {
  using tag = memory::format_tag;
  if (rank == 3) return {tag::nCw8c, tag::nCw16c, tag::nwc};
  if (rank == 4) return {tag::nChw8c, tag::nChw16c, tag::nhwc};
  return {tag::nCdhw8c, tag::nCdhw16c, tag::ndhwc};
}

bool is_global(const std::string& op) { return op == "GlobalAveragePool" || op == "GlobalMaxPool"; }

algorithm pool_algorithm(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  if (op == "MaxPool" || op == "GlobalMaxPool") return algorithm::pooling_max;
  if (op == "AveragePool" && ctx.attrs().int_or("count_include_pad", 0) == 1)
    return algorithm::pooling_avg_include_padding;
  return algorithm::pooling_avg_exclude_padding;
}

Cost pool_cost(const Shape& x, const std::vector<PoolDim>& dims) {
  int64_t out = x[0] * x[1], window = 1;
  for (const PoolDim& d : dims) {
    out *= d.out;
    window *= d.kernel;
  }
  return Cost{static_cast<double>(out * window), 4.0 * static_cast<double>(shape_numel(x) + out), {}};
}

// Where oneDNN's average differs from ONNX's (and the cpu EP's) for these dims.
KernelMatch check_average_dims(const NodeContext& ctx, const std::vector<PoolDim>& dims) {
  const bool include = pool_algorithm(ctx) == algorithm::pooling_avg_include_padding;
  for (const PoolDim& d : dims) {
    NXRT_REQUIRE(!include || d.pad_r <= d.onnx_pad_r,
                 "AveragePool: with ceil_mode the last window of a dim of size {} reaches {} past the end pad {}; "
                 "onednn divides it by the whole kernel where count_include_pad=1 counts only the taps inside the "
                 "pads (the cpu EP takes it)",
                 d.in, d.pad_r - d.onnx_pad_r, d.onnx_pad_r);
    NXRT_REQUIRE(include || (d.pad_l < d.span() && d.pad_r < d.span()),
                 "AveragePool: pads {} and {} around a dim of size {} leave a window of span {} with no input; "
                 "onednn refuses such windows with count_include_pad=0 (the cpu EP takes them)",
                 d.pad_l, d.pad_r, d.in, d.span());
    NXRT_REQUIRE(include || d.dilation < d.in,
                 "AveragePool: dilation {} is not below the dim size {}; onednn refuses it with count_include_pad=0 "
                 "(the cpu EP takes it)",
                 d.dilation + 1, d.in);
  }
  return KernelMatch::supported();
}

KernelMatch check_pool(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(!ctx.has_output(1),
               "MaxPool: the Indices output is not supported by the onednn EP; the cpu EP computes it");
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 3, 5));
  const auto spatial = static_cast<std::size_t>(*ctx.input_rank(0) - 2);
  NXRT_REQUIRE_MATCH(check_window_attrs(ctx, spatial, true));
  const bool average = op == "AveragePool";
  const int64_t include = ctx.attrs().int_or("count_include_pad", 0);
  NXRT_REQUIRE(!average || include == 0 || include == 1, "AveragePool: count_include_pad {} is not 0 or 1", include);
  const auto x = ctx.input_static_shape(0);
  if (!x) {
    const WindowAttrs attrs = read_window_attrs(ctx.attrs(), spatial);
    const bool dilated = std::ranges::any_of(attrs.dilations, [](int64_t d) { return d > 1; });
    NXRT_REQUIRE(!average || (!attrs.ceil_mode && !dilated),
                 "AveragePool: with ceil_mode or dilations the onednn EP needs the input shape to check its windows "
                 "(give --shape); the cpu EP takes it");
    // Without ceil_mode and dilations the windows depend on the attributes only.
    const bool explicit_pads = attrs.auto_pad == "NOTSET";
    for (std::size_t i = 0; average && include == 0 && explicit_pads && i < spatial; ++i)
      NXRT_REQUIRE(attrs.pads[i] < attrs.kernel[i] && attrs.pads[i + spatial] < attrs.kernel[i],
                   "AveragePool: pads {} reach a whole kernel {}, leaving windows with no input; onednn refuses them "
                   "with count_include_pad=0 (the cpu EP takes them)",
                   attrs.pads, attrs.kernel);
    return KernelMatch::supported();
  }
  auto dims = window_dims(ctx, *x);
  NXRT_REQUIRE(dims.has_value(), "{}", dims.error().what);
  if (average) NXRT_REQUIRE_MATCH(check_average_dims(ctx, *dims));
  return KernelMatch::supported(pool_cost(*x, *dims));
}

KernelMatch check_global_pool(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 3, 5));
  const auto x = ctx.input_static_shape(0);
  return KernelMatch::supported(x ? pool_cost(*x, global_dims(*x)) : Cost{});
}

Expected<void> lower_pool(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const ValueId x = ctx.node().inputs[0];
  auto x_dims = b.dims(x);
  if (!x_dims) return std::unexpected(std::move(x_dims.error()));
  auto dims = is_global(ctx.node().op_type) ? Expected<std::vector<PoolDim>>(global_dims(*x_dims))
                                            : window_dims(ctx, *x_dims);
  if (!dims) return std::unexpected(std::move(dims.error()));
  Dims out = {(*x_dims)[0], (*x_dims)[1]}, kernel, strides, dilation, pad_l, pad_r;
  for (const PoolDim& d : *dims) {
    out.push_back(d.out);
    kernel.push_back(d.kernel);
    strides.push_back(d.stride);
    dilation.push_back(d.dilation);
    pad_l.push_back(d.pad_l);
    pad_r.push_back(d.pad_r);
  }
  const memory::desc src_now = b.md(x);
  if (ctx.node().op_type == "MaxPool") {
    std::vector<MaxPoolDim> native_dims;
    for (const PoolDim& d : *dims)
      native_dims.push_back({d.in, d.out, d.kernel, d.stride, d.dilation + 1, d.pad_l});
    if (auto native = make_native_max_pool(src_now, native_dims)) {
      auto src = b.use(x, src_now);
      if (!src) return std::unexpected(std::move(src.error()));
      const int dst = b.define(f.output, native->dst_md);
      b.add_native_step(std::move(native->kernel), {{DNNL_ARG_SRC, *src}, {DNNL_ARG_DST, dst}}, f);
      return {};
    }
  }
  // oneDNN gives the output the source's layout. A blocked source (after a Conv) is read as
  // it is; a plain one would get oneDNN's slow simple_nchw kernel (its fast kernels read
  // channel-blocked or channels-last data), so those layouts are timed too, with the reorder.
  const memory::desc dst_md(out, memory::data_type::f32, memory::format_tag::any);
  std::vector<memory::desc> sources = {src_now};
  if (src_now == plain_md(*x_dims))
    for (memory::format_tag tag : faster_pool_layouts(x_dims->size()))
      sources.emplace_back(*x_dims, memory::data_type::f32, tag);
  using Desc = dnnl::pooling_v2_forward::desc;
  using Pd = dnnl::pooling_v2_forward::primitive_desc;
  // oneDNN's implementation iterator points at the op descriptor: they must outlive the search.
  std::vector<Desc> descs;
  std::vector<std::function<Pd()>> makers;
  auto made = emit(b, f.anchor, [&] {
    for (const memory::desc& src_md : sources)
      descs.emplace_back(dnnl::prop_kind::forward_inference, pool_algorithm(ctx), src_md, dst_md, strides, kernel,
                         dilation, pad_l, pad_r);
  });
  if (!made) return made;
  for (const Desc& d : descs) makers.emplace_back([&] { return Pd(d, PlanBuilder::base_attr(), b.engine()); });
  auto tuned = b.tuned<Pd>(ctx.node().name, makers, {DNNL_ARG_SRC, DNNL_ARG_DST}, src_now);
  if (!tuned) return std::unexpected(std::move(tuned.error()));
  const Pd& pd = *tuned;
  auto src = b.use(x, pd.src_desc());
  if (!src) return std::unexpected(std::move(src.error()));
  const int dst = b.define(f.output, pd.dst_desc());
  return emit(b, f.anchor, [&] {
    b.add_step(dnnl::pooling_v2_forward(pd), pd, {{DNNL_ARG_SRC, *src}, {DNNL_ARG_DST, dst}}, f);
  });
}

OnednnOpDef pool(const char* op, int64_t since, int64_t until) {
  return {{{"", op, since}, until, check_pool, {}}, lower_pool};
}

OnednnOpDef global_pool(const char* op) { return {{{"", op, 1}, 0, check_global_pool, {}}, lower_pool}; }

}  // namespace

std::vector<OnednnOpDef> pool_ops() {
  // MaxPool-8 adds Indices (declined here), 10 ceil_mode and dilations, 12 int8 (cpu EP);
  // AveragePool-7 adds count_include_pad, 10 ceil_mode, 19 dilations.
  return {
      pool("MaxPool", 1, 7),
      pool("MaxPool", 8, 9),
      pool("MaxPool", 10, 10),
      pool("MaxPool", 11, 11),
      pool("MaxPool", 12, 0),
      pool("AveragePool", 1, 6),
      pool("AveragePool", 7, 9),
      pool("AveragePool", 10, 10),
      pool("AveragePool", 11, 18),
      pool("AveragePool", 19, 0),
      global_pool("GlobalAveragePool"),
      global_pool("GlobalMaxPool"),
  };
}

}  // namespace nxrt::onednn
