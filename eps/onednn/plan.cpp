// Plan execution: bind the boundary tensors, run the primitives, hand back the outputs.
#include "plan.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

namespace nxrt::onednn {
namespace {

std::shared_ptr<std::byte[]> allocate_arena(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::size_t rounded = (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kArenaAlignment, rounded));
  if (!p) throw std::bad_alloc();
  return std::shared_ptr<std::byte[]>(p, [](std::byte* q) { std::free(q); });
}

}  // namespace

struct Plan::Execution {
  std::shared_ptr<std::byte[]> arena;
  std::vector<dnnl::memory> memories;  // one per view
  std::vector<std::unordered_map<int, dnnl::memory>> step_args;
  dnnl::stream stream;
};

Plan::Plan(dnnl::engine engine, std::vector<Buffer> buffers, std::vector<View> views, std::vector<Step> steps,
           std::vector<Dims> output_dims, PreparedWeights weights, Implementations implementations,
           std::shared_ptr<BufferPool> outputs)
    : engine_(std::move(engine)),
      buffers_(std::move(buffers)),
      views_(std::move(views)),
      steps_(std::move(steps)),
      output_dims_(std::move(output_dims)),
      weights_(std::move(weights)),
      implementations_(std::move(implementations)),
      outputs_(outputs ? std::move(outputs) : std::make_shared<BufferPool>()) {
  for (std::size_t v = 0; v < views_.size(); ++v) {
    const Buffer& b = buffers_[root_buffer(static_cast<int>(v)).first];
    if (b.kind == Buffer::Kind::kInput) input_views_.emplace_back(b.boundary_index, static_cast<int>(v));
    if (b.kind == Buffer::Kind::kOutput) output_views_.emplace_back(b.boundary_index, static_cast<int>(v));
  }
  give_back(take_execution());  // the first run's arena, allocated at compile time
}

Plan::~Plan() = default;

std::pair<std::size_t, std::size_t> Plan::root_buffer(int view) const {
  std::size_t slice_offset = 0;
  auto index = static_cast<std::size_t>(views_[static_cast<std::size_t>(view)].buffer);
  while (buffers_[index].kind == Buffer::Kind::kSlice) {
    slice_offset += buffers_[index].slice_offset;
    index = static_cast<std::size_t>(buffers_[index].parent);
  }
  return {index, slice_offset};
}

std::unique_ptr<Plan::Execution> Plan::take_execution() {
  {
    std::lock_guard lock(idle_mutex_);
    if (!idle_.empty()) {
      auto e = std::move(idle_.back());
      idle_.pop_back();
      return e;
    }
  }
  auto e = std::make_unique<Execution>();
  std::size_t arena_bytes = 0;
  for (const Buffer& b : buffers_)
    if (b.kind == Buffer::Kind::kArena) arena_bytes = std::max(arena_bytes, b.arena_offset + b.bytes);
  e->arena = allocate_arena(arena_bytes);
  for (std::size_t v = 0; v < views_.size(); ++v) {
    const auto [root, slice_offset] = root_buffer(static_cast<int>(v));
    const Buffer& b = buffers_[root];
    void* handle = nullptr;  // inputs and outputs are bound per run
    if (b.kind == Buffer::Kind::kArena) handle = e->arena.get() + b.arena_offset + slice_offset;
    if (b.kind == Buffer::Kind::kWeight) handle = b.weight->data();
    e->memories.emplace_back(views_[v].md, engine_, handle);
  }
  for (const Step& s : steps_) {
    std::unordered_map<int, dnnl::memory> args;
    for (const auto& [arg, view] : s.args) args.emplace(arg, e->memories[static_cast<std::size_t>(view)]);
    e->step_args.push_back(std::move(args));
  }
  e->stream = dnnl::stream(engine_);
  return e;
}

void Plan::give_back(std::unique_ptr<Execution> execution) {
  std::lock_guard lock(idle_mutex_);
  idle_.push_back(std::move(execution));
}

Expected<std::vector<RuntimeValue>> Plan::run(std::span<const RuntimeValue> inputs, bool profile) {
  std::unique_ptr<Execution> e = take_execution();
  auto outputs = run_on(*e, inputs, profile);
  // Even after a failed step: the next run binds every input and output again.
  give_back(std::move(e));
  return outputs;
}

Expected<std::vector<RuntimeValue>> Plan::run_on(Execution& e, std::span<const RuntimeValue> inputs,
                                                 bool profile) {
  std::vector<Tensor> keep_alive;  // contiguous copies of strided inputs
  for (const auto& [index, view] : input_views_) {
    const Tensor& t = inputs[static_cast<std::size_t>(index)].tensor();
    TensorView tv = t.view();
    if (!tv.is_contiguous()) {
      keep_alive.push_back(copy_to_contiguous(tv));
      tv = keep_alive.back().view();
    }
    e.memories[static_cast<std::size_t>(view)].set_data_handle(const_cast<void*>(tv.data()));
  }
  std::vector<RuntimeValue> outputs(output_dims_.size());
  // One tensor per output; several views (in-place steps, reshapes) may share its buffer.
  for (const auto& [index, view] : output_views_) {
    RuntimeValue& out = outputs[static_cast<std::size_t>(index)];
    if (!out.is_tensor()) {
      const Dims& d = output_dims_[static_cast<std::size_t>(index)];
      out = outputs_->allocate(DType::kFloat32, Shape(d.begin(), d.end()));  // every element written by a step
    }
    e.memories[static_cast<std::size_t>(view)].set_data_handle(out.tensor().mut().data());
  }
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    Step& s = steps_[i];
    const auto start = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    auto r = dnnl_call(fmt::format("running {} on the onednn EP", s.profile.nodes.front()),
                       [&] {
                         if (s.native)
                           s.native->execute(e.step_args[i]);  // oneDNN's CPU stream has finished the steps before
                         else
                           s.primitive.execute(e.stream, e.step_args[i]);
                       });
    if (!r) return std::unexpected(std::move(r.error()));
    if (profile) {
      e.stream.wait();
      s.profile.us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
      s.profile.start_us = std::chrono::duration<double, std::micro>(start.time_since_epoch()).count();
    }
  }
  e.stream.wait();
  return outputs;
}

}  // namespace nxrt::onednn
