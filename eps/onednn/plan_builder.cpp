// PlanBuilder: values, layouts and weights while lowering; arena placement at the end.
#include "plan_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <cstring>

namespace nxrt::onednn {
namespace {

constexpr std::size_t kMaxExtraWeightBytes = std::size_t{4} << 20;  // per primitive, beyond dense weights

std::size_t aligned(std::size_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

std::shared_ptr<FloatStorage> float_storage(std::size_t bytes) {
  return std::make_shared<FloatStorage>((bytes + sizeof(float) - 1) / sizeof(float));
}

// Copies `src` (layout src_md) into new storage of layout `dst_md`, now.
Expected<std::shared_ptr<FloatStorage>> reorder_now(const dnnl::engine& engine, const memory::desc& src_md,
                                                          const void* src, const memory::desc& dst_md,
                                                          const std::string& what) {
  auto out = float_storage(dst_md.get_size());
  if (src_md == dst_md) {
    std::memcpy(out->data(), src, src_md.get_size());
    return out;
  }
  auto r = dnnl_call(what, [&] {
    dnnl::stream stream(engine);
    dnnl::memory from(src_md, engine, const_cast<void*>(src));
    dnnl::memory to(dst_md, engine, out->data());
    dnnl::reorder(from, to).execute(stream, from, to);
    stream.wait();
  });
  if (!r) return std::unexpected(std::move(r.error()));
  return out;
}

}  // namespace

std::string md_key(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  return std::string(reinterpret_cast<const char*>(&d), sizeof(d));
}

PlanBuilder::PlanBuilder(dnnl::engine engine, const Partition& partition, std::span<const Dims> input_dims,
                         const PreparedWeights* restored, const Implementations* restored_choices,
                         std::shared_ptr<TuningCache> tuning_cache, std::function<bool(ValueId)> is_constant)
    : engine_(std::move(engine)),
      partition_(partition),
      graph_(*partition.graph),
      restored_(restored),
      restored_choices_(restored_choices),
      tuning_cache_(std::move(tuning_cache)),
      is_constant_(std::move(is_constant)) {
  for (std::size_t i = 0; i < partition.inputs.size(); ++i) {
    const ValueId v = partition.inputs[i];
    const int b = new_buffer(Buffer::Kind::kInput, 0);
    buffers_[static_cast<std::size_t>(b)].boundary_index = static_cast<int>(i);
    dims_[v] = input_dims[i];
    view_of_[v] = new_view(plain_md(input_dims[i]), b);
  }
  for (NodeId id : partition.nodes)
    for (ValueId v : graph_.node(id).inputs)
      if (v != kNoValue) ++remaining_uses_[v];
  boundary_outputs_.insert(partition.outputs.begin(), partition.outputs.end());
}

Expected<Dims> PlanBuilder::dims(ValueId v) const {
  if (auto it = dims_.find(v); it != dims_.end()) return it->second;
  const Value& val = graph_.value(v);
  if (val.initializer) return to_dims(val.initializer->shape());
  if (is_constant(v) && val.type.has_static_shape()) return to_dims(*val.type.static_shape());
  return fail(ErrorCode::kRuntime, fmt::format("the onednn EP needs the shape of '{}' before it is computed", val.name),
              "the partition's nodes are not in dependency order", "report this as a bug in the onednn EP");
}

Expected<Tensor> PlanBuilder::constant(ValueId v) const {
  const Value& val = graph_.value(v);
  if (!val.initializer)
    return fail(ErrorCode::kInvalidInput, fmt::format("constant '{}' is not stored with this partition", val.name),
                "its prepared form in the EPContext blob does not match this machine's layouts",
                "recompile the model with nxrt compile-epcontext on this machine");
  auto t = val.initializer->materialize();
  if (!t) return forward_error(std::move(t), fmt::format("reading initializer '{}'", val.name));
  return t;
}

memory::desc PlanBuilder::md(ValueId v) const {
  if (auto it = view_of_.find(v); it != view_of_.end()) return views_[static_cast<std::size_t>(it->second)].md;
  auto d = dims(v);
  return plain_md(d ? *d : Dims{});
}

Expected<int> PlanBuilder::use(ValueId v, const memory::desc& want) {
  const std::string key = md_key(want);
  if (auto it = converted_.find({v, key}); it != converted_.end()) return it->second;
  auto own = dims(v);
  if (!own) return std::unexpected(std::move(own.error()));
  if (want.dims() != plain_md(*own).dims()) {
    // Another shape of the same elements (leading 1s, flattening): a plain view of its bytes.
    if (shape_numel(want.dims()) != shape_numel(*own) || want != plain_md(want.dims()))
      return fail(ErrorCode::kRuntime,
                  fmt::format("value '{}' {} cannot be read as {}", graph_.value(v).name, shape_to_string(*own),
                              shape_to_string(want.dims())),
                  "only plain layouts of the same element count can be reshaped", "report this as a bug in the onednn EP");
    auto base = use(v, plain_md(*own));
    if (!base) return base;
    const int view = new_view(want, buffer_of(*base));
    converted_[{v, key}] = view;
    return view;
  }
  if (!view_of_.contains(v)) {
    if (!is_constant(v))
      return fail(ErrorCode::kRuntime, fmt::format("value '{}' is read before it is computed", graph_.value(v).name),
                  "the partition's steps are out of order", "report this as a bug in the onednn EP");
    auto view = weight(graph_.value(v).name, want, {v}, [&]() -> Expected<PlainWeight> {
      auto t = constant(v);
      if (!t) return std::unexpected(std::move(t.error()));
      if (t->dtype() != DType::kFloat32)
        return fail(ErrorCode::kRuntime, fmt::format("constant '{}' is {}, the onednn EP computes in float",
                                                     graph_.value(v).name, dtype_name(t->dtype())));
      return PlainWeight{plain_md(to_dims(t->shape())), *t};
    });
    if (view) converted_[{v, key}] = *view;
    return view;
  }
  const int current = view_of_.at(v);
  if (views_[static_cast<std::size_t>(current)].md == want) return current;
  const int to = new_view(want, new_buffer(Buffer::Kind::kArena, want.get_size()));
  auto r = dnnl_call(fmt::format("reordering '{}' for the onednn EP", graph_.value(v).name), [&] {
    dnnl::reorder::primitive_desc pd(engine_, views_[static_cast<std::size_t>(current)].md, engine_, want,
                                     base_attr());
    FusedOp reorder_op;
    reorder_op.anchor = current_ ? current_->anchor : -1;
    reorder_op.members = current_ ? current_->members : std::vector<NodeId>{};
    add_step(dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, current}, {DNNL_ARG_TO, to}}, reorder_op, "Reorder");
  });
  if (!r) return std::unexpected(std::move(r.error()));
  converted_[{v, key}] = to;
  return to;
}

Expected<int> PlanBuilder::weight(const std::string& key, const memory::desc& want,
                                  const std::vector<ValueId>& sources,
                                  const std::function<Expected<PlainWeight>()>& make_plain) {
  if (current_)
    for (ValueId s : sources) weight_readers_[s].insert(current_->members.begin(), current_->members.end());
  std::shared_ptr<FloatStorage> data;
  const std::string what = fmt::format("preparing weight '{}' for the onednn EP", key);
  if (auto it = prepared_.find(key); it != prepared_.end() && it->second.md == want) {
    data = it->second.data;
  } else if (restored_ && restored_->contains(key)) {
    const PreparedWeight& r = restored_->at(key);
    if (r.md == want) {
      data = r.data;  // already in the layout this primitive wants: no copy
    } else {
      auto d = reorder_now(engine_, r.md, r.data->data(), want, what);
      if (!d) return std::unexpected(std::move(d.error()));
      data = *d;
    }
  } else {
    auto plain = make_plain();
    if (!plain) return forward_error(std::move(plain), what);
    auto d = reorder_now(engine_, plain->md, plain->data.view().data(), want, what);
    if (!d) return std::unexpected(std::move(d.error()));
    data = *d;
  }
  prepared_[key] = {want, data};
  const int b = new_buffer(Buffer::Kind::kWeight, want.get_size());
  buffers_[static_cast<std::size_t>(b)].weight = data;
  return new_view(want, b);
}

int PlanBuilder::define(ValueId v, const memory::desc& md) {
  const int view = new_view(md, new_buffer(Buffer::Kind::kArena, md.get_size()));
  view_of_[v] = view;
  dims_[v] = md.dims();
  return view;
}

int PlanBuilder::define_in_place(ValueId v, const memory::desc& md, int reuse) {
  const int view = new_view(md, views_[static_cast<std::size_t>(reuse)].buffer);
  view_of_[v] = view;
  dims_[v] = md.dims();
  return view;
}

bool PlanBuilder::is_last_use(ValueId v) const {
  auto view = view_of_.find(v);
  return view != view_of_.end() && can_overwrite(v, view->second);
}

std::size_t PlanBuilder::choose_implementation(const std::string& key, const std::vector<dnnl::primitive_desc>& impls,
                                               const std::vector<int>& args, const memory::desc& src_now) {
  std::vector<std::string> names;
  for (const auto& pd : impls) names.emplace_back(pd.impl_info_str());
  auto named = [&](const std::string& name) { return std::ranges::find(names, name) - names.begin(); };
  if (restored_choices_) {
    if (auto it = restored_choices_->find(key); it != restored_choices_->end()) {
      const auto i = static_cast<std::size_t>(named(it->second));
      if (i < names.size()) {
        choices_[key] = names[i];
        return i;
      }
    }
  }
  std::string problem = md_key(src_now);  // layouts and sizes of every argument: equal problems share a choice
  for (int arg : args) problem += md_key(impls.front().query_md(dnnl::query::exec_arg_md, arg));
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (!names[i].starts_with("ref")) candidates.push_back(i);  // the reference kernel is never the fastest
  // Weights stay in the chosen layout for the session: one that takes far more memory than
  // the dense weights (Winograd's transformed kernels, 1.8x-4x) is left out on large layers.
  std::erase_if(candidates, [&](std::size_t i) {
    const memory::desc w = impls[i].query_md(dnnl::query::exec_arg_md, DNNL_ARG_WEIGHTS);
    const std::size_t dense = static_cast<std::size_t>(shape_numel(w.dims())) * sizeof(float);
    return i != 0 && w.get_size() > dense + kMaxExtraWeightBytes;
  });
  // SSE4.1 kernels only win a timing when the machine is busy: never where AVX kernels exist.
  const bool wide = std::ranges::any_of(candidates, [&](std::size_t i) { return names[i].find("avx") != std::string::npos; });
  std::erase_if(candidates, [&](std::size_t i) { return wide && names[i].find("sse41") != std::string::npos; });
  std::size_t best = candidates.empty() ? 0 : candidates.front();
  if (tuning_ && candidates.size() > 1) {
    if (auto known = tuning_cache_->find(problem)) {
      if (const auto i = static_cast<std::size_t>(named(*known)); i < names.size()) best = i;
    } else {
      best = fastest(candidates, impls, args, src_now);
      tuning_cache_->remember(problem, names[best]);
    }
  }
  choices_[key] = names[best];
  return best;
}

std::size_t PlanBuilder::fastest(const std::vector<std::size_t>& candidates,
                                 const std::vector<dnnl::primitive_desc>& impls, const std::vector<int>& args,
                                 const memory::desc& src_now) const {
  // Each candidate runs once to warm caches and fault pages in, then up to kRounds times in
  // turns, so that a burst of load elsewhere on the machine hits every candidate alike; the
  // best round of each counts. After the first round only the close contenders run again.
  constexpr int kRounds = 3;
  constexpr double kContender = 1.25;  // within this factor of the best so far
  struct Trial {
    std::size_t index;
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> memories;
    std::optional<dnnl::reorder> reorder;  // src_now to the layout this kernel reads
    std::unordered_map<int, dnnl::memory> reorder_args;
    double best_us = std::numeric_limits<double>::infinity();

    void execute(dnnl::stream& stream) {
      if (reorder) reorder->execute(stream, reorder_args);
      primitive.execute(stream, memories);
      stream.wait();
    }
  };
  constexpr int kSrcNow = -1;  // the buffer holding the source in its present layout
  // The candidates run one after another, so each argument has one zeroed buffer, as large
  // as the largest layout any candidate wants: peak memory stays that of one candidate.
  std::vector<int> all_args = args;
  all_args.push_back(DNNL_ARG_SCRATCHPAD);
  std::map<int, std::size_t> bytes = {{kSrcNow, src_now.get_size()}};
  for (std::size_t i : candidates)
    for (int arg : all_args)
      bytes[arg] = std::max(bytes[arg], impls[i].query_md(dnnl::query::exec_arg_md, arg).get_size());
  std::map<int, std::vector<float>> buffers;  // a cache line more than needed, for alignment
  std::map<int, void*> aligned_at;
  for (const auto& [arg, size] : bytes) {
    if (size == 0) continue;
    std::vector<float>& b = buffers[arg];
    b.assign((size + kArenaAlignment) / sizeof(float) + 1, 0.0f);
    void* p = b.data();
    std::size_t space = b.size() * sizeof(float);
    aligned_at[arg] = std::align(kArenaAlignment, size, p, space);
  }
  dnnl::stream stream(engine_);
  std::vector<Trial> trials;
  for (std::size_t i : candidates) {
    const dnnl::primitive_desc& pd = impls[i];
    Trial t{i, dnnl::primitive(pd), {}, std::nullopt, {}};
    for (int arg : all_args) {
      const memory::desc md = pd.query_md(dnnl::query::exec_arg_md, arg);
      if (md.get_size() > 0) t.memories.emplace(arg, dnnl::memory(md, engine_, aligned_at.at(arg)));
    }
    if (const memory::desc src = pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_SRC); src != src_now) {
      t.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine_, src_now, engine_, src));
      t.reorder_args = {{DNNL_ARG_FROM, dnnl::memory(src_now, engine_, aligned_at.at(kSrcNow))},
                        {DNNL_ARG_TO, t.memories.at(DNNL_ARG_SRC)}};
    }
    t.execute(stream);
    trials.push_back(std::move(t));
  }
  double best_us = std::numeric_limits<double>::infinity();
  for (int round = 0; round < kRounds; ++round)
    for (Trial& t : trials) {
      if (round > 0 && t.best_us > kContender * best_us) continue;
      const auto start = std::chrono::steady_clock::now();
      t.execute(stream);
      t.best_us = std::min(t.best_us, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      best_us = std::min(best_us, t.best_us);
    }
  // Winograd kernels keep their weights transformed, 1.8x (2x3) to 4x (4x3) larger: one wins
  // only when it is clearly faster than every other kernel.
  constexpr double kWinogradMargin = 1.5;
  auto is_winograd = [&](const Trial& t) { return std::string_view(impls[t.index].impl_info_str()).find("wino") != std::string_view::npos; };
  auto score = [&](const Trial& t) { return is_winograd(t) ? t.best_us * kWinogradMargin : t.best_us; };
  return std::ranges::min_element(trials, {}, score)->index;
}

bool PlanBuilder::can_overwrite(ValueId v, int view) const {
  const int buffer = buffer_of(view);
  if (buffers_[static_cast<std::size_t>(buffer)].kind != Buffer::Kind::kArena) return false;
  // Every value living in this buffer (v, and views of it such as a Reshape's output) must
  // be dead after this step.
  auto dead = [&](ValueId u) {
    if (boundary_outputs_.contains(u) || graph_.value(u).is_graph_output) return false;
    auto it = remaining_uses_.find(u);
    return it == remaining_uses_.end() || it->second == 0;
  };
  if (!dead(v)) return false;
  for (const auto& [u, u_view] : view_of_)
    if (u != v && buffer_of(u_view) == buffer && !dead(u)) return false;
  for (const auto& [key, u_view] : converted_)
    if (key.first != v && buffer_of(u_view) == buffer && !dead(key.first)) return false;
  return true;
}

std::optional<int> PlanBuilder::concat_in_place(ValueId out, std::span<const ValueId> inputs, int axis,
                                                const memory::desc& dst_md) {
  if (boundary_outputs_.contains(out) || graph_.value(out).is_graph_output) return std::nullopt;
  std::set<int> seen;
  std::vector<std::pair<int, std::size_t>> slices;  // (buffer, byte offset)
  Dims offsets(dst_md.dims().size(), 0);
  for (ValueId v : inputs) {
    auto view = view_of_.find(v);
    if (view == view_of_.end() || !can_overwrite(v, view->second)) return std::nullopt;
    const View& src = views_[static_cast<std::size_t>(view->second)];
    const Buffer& buffer = buffers_[static_cast<std::size_t>(src.buffer)];
    if (!seen.insert(src.buffer).second || buffer.bytes != src.md.get_size() || src.md.data.offset0 != 0)
      return std::nullopt;
    for (const Buffer& other : buffers_)
      if (other.kind == Buffer::Kind::kSlice && other.parent == src.buffer) return std::nullopt;
    dnnl_memory_desc_t sub = dst_md.submemory_desc(src.md.dims(), offsets).data;
    const std::size_t byte_offset = static_cast<std::size_t>(sub.offset0) * sizeof(float);
    sub.offset0 = 0;
    if (memory::desc(sub) != src.md) return std::nullopt;  // not one dense block of dst
    slices.emplace_back(src.buffer, byte_offset);
    offsets[static_cast<std::size_t>(axis)] += src.md.dims()[static_cast<std::size_t>(axis)];
  }
  const int whole = new_buffer(Buffer::Kind::kArena, dst_md.get_size());
  for (const auto& [buffer, offset] : slices) {
    Buffer& b = buffers_[static_cast<std::size_t>(buffer)];
    b.kind = Buffer::Kind::kSlice;
    b.parent = whole;
    b.slice_offset = offset;
  }
  return define_in_place(out, dst_md, new_view(dst_md, whole));
}

int PlanBuilder::scratch(const memory::desc& md) {
  return new_view(md, new_buffer(Buffer::Kind::kArena, md.get_size()));
}

dnnl::primitive_attr PlanBuilder::base_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void PlanBuilder::begin(const FusedOp& op) {
  current_ = &op;
  for (NodeId id : op.members)
    for (ValueId v : graph_.node(id).inputs)
      if (v != kNoValue) --remaining_uses_[v];
}

std::string PlanBuilder::step_label(const FusedOp& op) const {
  return op.anchor >= 0 ? graph_.node(op.anchor).op_type : "Reorder";
}

void PlanBuilder::add_step(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd,
                           std::vector<std::pair<int, int>> args, const FusedOp& op, std::string op_type) {
  const memory::desc scratch_md = pd.scratchpad_desc();
  if (scratch_md.get_size() > 0) args.emplace_back(DNNL_ARG_SCRATCHPAD, scratch(scratch_md));
  StepProfile profile = step_profile(op, std::move(op_type));
  profile.variant = pd.impl_info_str();
  steps_.push_back({std::move(primitive), nullptr, std::move(args), std::move(profile)});
}

void PlanBuilder::add_native_step(std::shared_ptr<const NativeKernel> kernel, std::vector<std::pair<int, int>> args,
                                  const FusedOp& op) {
  StepProfile profile = step_profile(op, {});
  profile.variant = kernel->name();
  steps_.push_back({dnnl::primitive(), std::move(kernel), std::move(args), std::move(profile)});
}

StepProfile PlanBuilder::step_profile(const FusedOp& op, std::string op_type) const {
  StepProfile profile;
  for (NodeId id : op.members) profile.nodes.push_back(graph_.node(id).name);
  if (profile.nodes.empty()) profile.nodes.push_back(partition_.name);
  profile.op_type = op_type.empty() ? step_label(op) : std::move(op_type);
  return profile;
}

int PlanBuilder::new_buffer(Buffer::Kind kind, std::size_t bytes) {
  Buffer b;
  b.kind = kind;
  b.bytes = bytes;
  buffers_.push_back(std::move(b));
  return static_cast<int>(buffers_.size() - 1);
}

int PlanBuilder::new_view(const memory::desc& md, int buffer) {
  views_.push_back({md, buffer});
  return static_cast<int>(views_.size() - 1);
}

std::set<ValueId> PlanBuilder::packed_initializers() const {
  std::set<ValueId> out;
  for (const auto& [v, readers] : weight_readers_) {
    const Value& val = graph_.value(v);
    if (!val.initializer || val.is_graph_input) continue;
    const bool all_packed = std::all_of(val.consumers.begin(), val.consumers.end(),
                                        [&](NodeId c) { return readers.contains(c); });
    if (all_packed) out.insert(v);
  }
  return out;
}

Expected<std::unique_ptr<Plan>> PlanBuilder::finish(std::shared_ptr<BufferPool> outputs) {
  current_ = nullptr;
  std::vector<Dims> output_dims;
  for (std::size_t k = 0; k < partition_.outputs.size(); ++k) {
    const ValueId v = partition_.outputs[k];
    auto it = view_of_.find(v);
    if (it == view_of_.end())
      return fail(ErrorCode::kRuntime,
                  fmt::format("partition '{}' does not compute its output '{}'", partition_.name, graph_.value(v).name),
                  "a lowering left a value undefined", "report this as a bug in the onednn EP");
    const Dims d = dims_.at(v);
    output_dims.push_back(d);
    const View view = views_[static_cast<std::size_t>(it->second)];  // a copy: views_ grows below
    Buffer& b = buffers_[static_cast<std::size_t>(view.buffer)];
    const bool has_parts = std::any_of(buffers_.begin(), buffers_.end(), [&](const Buffer& o) {
      return o.kind == Buffer::Kind::kSlice && o.parent == view.buffer;
    });
    if (view.md == plain_md(d) && b.kind == Buffer::Kind::kArena && !has_parts) {
      b.kind = Buffer::Kind::kOutput;
      b.boundary_index = static_cast<int>(k);
      continue;
    }
    const int out_buffer = new_buffer(Buffer::Kind::kOutput, 0);
    buffers_[static_cast<std::size_t>(out_buffer)].boundary_index = static_cast<int>(k);
    const int to = new_view(plain_md(d), out_buffer);
    auto r = dnnl_call(fmt::format("reordering output '{}' for the onednn EP", graph_.value(v).name), [&] {
      dnnl::reorder::primitive_desc pd(engine_, view.md, engine_, plain_md(d), base_attr());
      FusedOp none;
      add_step(dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, it->second}, {DNNL_ARG_TO, to}}, none, "Reorder");
    });
    if (!r) return std::unexpected(std::move(r.error()));
  }

  // Lifetime of each arena buffer: the steps between its first and last use.
  std::vector<std::pair<int, int>> life(buffers_.size(), {-1, -1});
  auto root = [&](int b) {
    while (buffers_[static_cast<std::size_t>(b)].kind == Buffer::Kind::kSlice) b = buffers_[static_cast<std::size_t>(b)].parent;
    return b;
  };
  for (std::size_t s = 0; s < steps_.size(); ++s)
    for (const auto& [arg, view] : steps_[s].args) {
      auto& [first, last] = life[static_cast<std::size_t>(root(views_[static_cast<std::size_t>(view)].buffer))];
      if (first < 0) first = static_cast<int>(s);
      last = static_cast<int>(s);
    }
  // Largest first, each at the lowest offset free during its whole lifetime.
  std::vector<int> order;
  for (std::size_t b = 0; b < buffers_.size(); ++b)
    if (buffers_[b].kind == Buffer::Kind::kArena && life[b].first >= 0) order.push_back(static_cast<int>(b));
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return buffers_[static_cast<std::size_t>(a)].bytes > buffers_[static_cast<std::size_t>(b)].bytes; });
  std::vector<int> placed;
  for (int b : order) {
    Buffer& buf = buffers_[static_cast<std::size_t>(b)];
    const auto [first, last] = life[static_cast<std::size_t>(b)];
    std::vector<std::pair<std::size_t, std::size_t>> busy;
    for (int p : placed) {
      const auto [pf, pl] = life[static_cast<std::size_t>(p)];
      if (pl < first || pf > last) continue;
      const Buffer& o = buffers_[static_cast<std::size_t>(p)];
      busy.emplace_back(o.arena_offset, o.arena_offset + aligned(o.bytes));
    }
    std::sort(busy.begin(), busy.end());
    std::size_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + aligned(buf.bytes) <= lo) break;
      offset = std::max(offset, hi);
    }
    buf.arena_offset = offset;
    placed.push_back(b);
  }
  try {
    return std::make_unique<Plan>(engine_, std::move(buffers_), std::move(views_), std::move(steps_),
                                  std::move(output_dims), std::move(prepared_), std::move(choices_),
                                  std::move(outputs));
  } catch (const dnnl::error& e) {
    return fail(ErrorCode::kRuntime, fmt::format("cannot create the memory of partition '{}'", partition_.name),
                fmt_dnnl_error(e));
  }
}

}  // namespace nxrt::onednn
