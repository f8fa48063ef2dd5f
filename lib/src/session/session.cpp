// Session: EP creation, analysis, compilation (or EPContext restore) and execution.
#include "nxrt/session/session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "epcontext_node.h"
#include "nxrt/ep/buffer_pool.h"
#include "nxrt/ir/passes.h"

namespace nxrt {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Checks a fed tensor against the input's declared type: dtype, rank and static dims.
Expected<void> check_tensor_input(const Value& v, const Tensor& t) {
  const ValueType& type = v.type;
  if (type.dtype != DType::kUndefined && t.dtype() != type.dtype)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("input '{}' is {}, the model expects {}", v.name, dtype_name(t.dtype()),
                            dtype_name(type.dtype)),
                {}, fmt::format("give '{}' a tensor of type {}", v.name, dtype_name(type.dtype)));
  if (!type.shape || type.kind != ValueType::Kind::kTensor) return {};
  const auto& dims = *type.shape;
  bool ok = dims.size() == t.shape().size();
  for (std::size_t i = 0; ok && i < dims.size(); ++i) ok = !dims[i].known() || dims[i].size == t.shape()[i];
  if (!ok)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("input '{}' has shape {}, the model expects {}", v.name, shape_to_string(t.shape()),
                            type.to_string()),
                {}, "feed a tensor of the declared shape (symbolic dimensions may take any size)");
  return {};
}

// The kind of value the declared type admits: optionals admit none or their content.
bool kind_fits(const ValueType& type, RuntimeValue::Kind kind) {
  using K = ValueType::Kind;
  switch (type.kind) {
    case K::kTensor: return kind == RuntimeValue::Kind::kTensor;
    case K::kSequence: return kind == RuntimeValue::Kind::kSequence;
    case K::kOptional:
      return kind == RuntimeValue::Kind::kNone ||
             kind == (type.optional_of == K::kSequence ? RuntimeValue::Kind::kSequence
                                                       : RuntimeValue::Kind::kTensor);
    case K::kMap:
    case K::kUnknown: break;
  }
  return false;
}

Expected<void> check_input(const Value& v, const RuntimeValue& value) {
  if (!kind_fits(v.type, value.kind()))
    return fail(ErrorCode::kInvalidInput,
                fmt::format("input '{}' is a {}, the model expects {}", v.name, value.describe(), v.type.to_string()),
                {}, fmt::format("give '{}' a value of type {}", v.name, v.type.to_string()));
  if (value.is_tensor()) return check_tensor_input(v, value.tensor());
  if (value.is_sequence())
    for (const Tensor& item : value.items())
      if (auto r = check_tensor_input(v, item); !r) return r;
  return {};
}

// `value` with `move` applied to each of its tensors (the tensor, or every sequence item).
template <class Move>
Expected<RuntimeValue> map_tensors(const RuntimeValue& value, Move&& move) {
  if (value.is_tensor()) {
    auto t = move(value.tensor());
    if (!t) return std::unexpected(t.error());
    return RuntimeValue(std::move(*t));
  }
  if (value.is_sequence()) {
    std::vector<Tensor> items;
    for (const Tensor& item : value.items()) {
      auto t = move(item);
      if (!t) return std::unexpected(t.error());
      items.push_back(std::move(*t));
    }
    return RuntimeValue::sequence(value.dtype(), std::move(items));
  }
  return value;
}

// `value` with its tensors in the EP's memory (a copy when they are elsewhere), or in host
// memory when `host_is_fine` (a partition that takes host inputs). Only the EP that produced a
// tensor in device memory (`producer`) can read it: such a tensor goes through host memory,
// copied out by the producer.
Expected<RuntimeValue> to_device(const RuntimeValue& value, ExecutionProvider& ep, ExecutionProvider* producer,
                                 bool host_is_fine) {
  return map_tensors(value, [&](const Tensor& t) -> Expected<Tensor> {
    if (!t.defined() || t.device() == ep.info().device) return t;
    Tensor src = t;
    if (!t.device().is_host()) {
      if (!producer)
        return fail(ErrorCode::kRuntime, fmt::format("a tensor on {} has no EP to copy it", t.device().to_string()));
      src = Tensor::empty(t.dtype(), t.shape());
      if (auto r = producer->copy(t.view(), src.mut()); !r) return std::unexpected(r.error());
      if (ep.info().device.is_host()) return src;
    }
    if (host_is_fine) return src;
    auto moved = ep.allocate(src.dtype(), src.shape());
    if (!moved) return std::unexpected(moved.error());
    if (auto r = ep.copy(src.view(), moved->mut()); !r) return std::unexpected(r.error());
    return *moved;
  });
}

// `value` with its tensors in host memory, copied by `ep` (the EP that produced it).
Expected<RuntimeValue> to_host(const RuntimeValue& value, ExecutionProvider& ep) {
  return map_tensors(value, [&](const Tensor& t) -> Expected<Tensor> {
    if (!t.defined() || t.device().is_host()) return t;
    Tensor host = Tensor::empty(t.dtype(), t.shape());
    if (auto r = ep.copy(t.view(), host.mut()); !r) return std::unexpected(r.error());
    return host;
  });
}

}  // namespace

Expected<EpRegistry> create_eps(const std::vector<std::string>& names, const EpConfig& given) {
  EpConfig config = given;
  if (!config.host_buffers) config.host_buffers = std::make_shared<BufferPool>();
  EpRegistry registry;
  std::set<std::string> seen;
  for (const auto& name : names) {
    if (!seen.insert(name).second)
      return fail(ErrorCode::kUsage, fmt::format("EP '{}' is listed twice in --ep", name), {},
                  "list each EP once, in priority order");
    const EpFactory* factory = find_ep_factory(name);
    if (!factory) {
      std::vector<std::string> known;
      for (const auto& f : ep_factories()) known.push_back(f.name);
      return fail(ErrorCode::kUsage, fmt::format("unknown EP '{}'", name),
                  fmt::format("this build has: {}", fmt::join(known, ", ")),
                  "run 'nxrt list-eps' to see the EPs and why any is unavailable");
    }
    auto ep = factory->create(config);
    if (!ep) return forward_error(std::move(ep), fmt::format("creating the {} EP", name));
    registry.add(std::move(*ep));
  }
  return registry;
}

Expected<Analysis> analyze(const std::filesystem::path& model_path, const SessionOptions& options) {
  auto eps = create_eps(options.eps, options.config);
  if (!eps) return std::unexpected(eps.error());
  std::vector<ExecutionProvider*> raw;
  for (const auto& ep : eps->eps()) raw.push_back(ep.get());
  auto contexts = build_ep_context_registry(raw);
  if (!contexts) return std::unexpected(contexts.error());
  auto model = load_model(model_path, options.load);
  if (!model) return std::unexpected(model.error());
  std::vector<std::string> rewrites;
  // The cuda EP runs Conv and MatMul on cuDNN and cuBLASLt in float, and its QLinearConv is a
  // direct loop: a QDQ model keeps its float ops when the cuda EP may take them.
  const bool keeps_float_ops = std::ranges::find(options.eps, "cuda") != options.eps.end();
  for (const auto& pass : default_passes()) {
    if (std::ranges::find(options.skipped_passes, pass->name()) != options.skipped_passes.end()) continue;
    if (keeps_float_ops && pass->name() == "fuse-qdq") continue;
    auto changes = pass->run(*model->graph);
    if (!changes) return forward_error(std::move(changes), fmt::format("running pass '{}'", pass->name()));
    for (auto& c : *changes) rewrites.push_back(fmt::format("{}: {}", pass->name(), c));
  }
  std::vector<ValueId> exposed;
  if (options.all_values_as_outputs) exposed = mark_node_outputs_as_graph_outputs(*model->graph);
  auto report = analyze_claims(*model, *eps, *contexts, options.placement);
  if (!report) return std::unexpected(report.error());
  return Analysis{std::move(*eps), std::move(*contexts), std::move(*model), std::move(rewrites), std::move(*report),
                  std::move(exposed)};
}

Session::~Session() = default;

Expected<std::unique_ptr<Session>> Session::create(const std::filesystem::path& model_path,
                                                   const SessionOptions& options) {
  const auto t0 = Clock::now();
  auto analysis = analyze(model_path, options);
  if (!analysis) return std::unexpected(analysis.error());
  std::unique_ptr<Session> s(new Session());
  s->analysis_ = std::move(*analysis);
  const ClaimsReport& report = s->analysis_.report;
  if (!report.unclaimed().empty()) return fail(report.unclaimed_error(model_path.string()));

  const Graph& graph = *s->analysis_.model.graph;
  auto contexts = read_context_nodes(graph);
  if (!contexts) return forward_error(std::move(contexts), fmt::format("loading '{}'", model_path.string()));
  for (const Partition& p : report.partitions) {
    ExecutionProvider* ep = s->analysis_.eps.find(p.ep);
    const Node& first = graph.node(p.nodes.front());
    Expected<std::unique_ptr<CompiledPartition>> compiled = nullptr;
    if (first.is_ep_context()) {
      auto* capable = dynamic_cast<ContextCapable*>(ep);
      if (!capable)
        return fail(ErrorCode::kInvalidInput,
                    fmt::format("EPContext node '{}' is for the {} EP, which cannot load contexts", first.name, p.ep));
      compiled = capable->load_context(contexts->at(first.id), p);
      if (!compiled)
        return forward_error(std::move(compiled), fmt::format("loading {} from '{}'", first.describe(),
                                                               model_path.string()));
    } else {
      compiled = ep->compile(p);
      if (!compiled)
        return forward_error(std::move(compiled),
                             fmt::format("compiling partition '{}' of '{}' on the {} EP", p.name, model_path.string(), p.ep));
    }
    s->serial_.push_back((*compiled)->runs_concurrently() ? nullptr : std::make_unique<std::mutex>());
    s->compiled_.push_back(std::move(*compiled));
  }

  // Outputs that no partition on a device reads go to the host anyway: their producers may
  // copy them there before their runs end.
  std::set<ValueId> read_on_device;
  for (const Partition& p : report.partitions)
    if (!s->analysis_.eps.find(p.ep)->info().device.is_host()) read_on_device.insert(p.inputs.begin(), p.inputs.end());
  for (const Partition& p : report.partitions) {
    std::vector<bool> on_host;
    for (ValueId v : p.outputs) on_host.push_back(!read_on_device.contains(v));
    s->compiled_[static_cast<std::size_t>(p.index)]->set_host_outputs(std::move(on_host));
  }

  // Each boundary value is dropped after the last partition that reads it.
  std::map<ValueId, std::size_t> last_reader;
  for (const Partition& p : report.partitions)
    for (ValueId v : p.inputs) last_reader[v] = static_cast<std::size_t>(p.index);
  s->release_after_.resize(report.partitions.size());
  for (const auto& [v, idx] : last_reader)
    if (!graph.value(v).is_graph_output) s->release_after_[idx].push_back(static_cast<std::size_t>(v));
  s->create_ms_ = ms_since(t0);
  return s;
}

std::vector<const Value*> Session::required_inputs() const {
  std::vector<const Value*> out;
  const Graph& g = *analysis_.model.graph;
  for (ValueId v : g.inputs)
    if (!g.value(v).initializer) out.push_back(&g.value(v));
  return out;
}

Expected<void> Session::check_inputs(const std::map<std::string, RuntimeValue>& inputs) const {
  for (const Value* v : required_inputs())
    if (!inputs.contains(v->name))
      return fail(ErrorCode::kUsage, fmt::format("input '{}' ({}) was not given", v->name, v->type.to_string()), {},
                  fmt::format("pass --input {}=FILE.npy (or =random)", v->name));
  for (const auto& [name, value] : inputs)
    if (auto r = check_input(name, value); !r) return r;
  return {};
}

Expected<void> Session::check_input(const std::string& name, const RuntimeValue& value) const {
  const Graph& g = *analysis_.model.graph;
  auto id = g.find_value(name);
  if (!id || !g.value(*id).is_graph_input) {
    std::vector<std::string> names;
    for (ValueId in : g.inputs) names.push_back(g.value(in).name);
    return fail(ErrorCode::kUsage, fmt::format("'{}' is not an input of the model", name), {},
                fmt::format("the inputs are: {}", fmt::join(names, ", ")));
  }
  return nxrt::check_input(g.value(*id), value);
}

Expected<std::vector<RuntimeValue>> Session::run_partition(const Partition& p, std::span<const RuntimeValue> args) {
  const auto index = static_cast<std::size_t>(p.index);
  std::unique_lock<std::mutex> serial;
  if (serial_[index]) serial = std::unique_lock(*serial_[index]);
  try {
    return compiled_[index]->run(args);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kRuntime, "out of memory", "a tensor the model computes is larger than the memory available",
                "run the model with smaller inputs or on a machine with more memory");
  }
}

Expected<std::map<std::string, RuntimeValue>> Session::run(const std::map<std::string, RuntimeValue>& inputs,
                                                           RunStats* stats) {
  if (auto r = check_inputs(inputs); !r) return std::unexpected(r.error());
  const Graph& g = *analysis_.model.graph;
  const ClaimsReport& report = analysis_.report;
  std::vector<RuntimeValue> values(g.values.size());
  std::vector<bool> known(g.values.size(), false);
  auto set = [&](ValueId v, RuntimeValue value) {
    values[static_cast<std::size_t>(v)] = std::move(value);
    known[static_cast<std::size_t>(v)] = true;
  };
  for (const auto& [name, value] : inputs) set(*g.find_value(name), value);
  // Graph inputs left out, and outputs that are initializers, take the initializer's value.
  auto initializer_default = [&](ValueId v) -> Expected<void> {
    const Value& val = g.value(v);
    if (known[static_cast<std::size_t>(v)] || !val.initializer) return {};
    auto t = val.initializer->materialize();
    if (!t) return std::unexpected(t.error());
    set(v, std::move(*t));
    return {};
  };
  for (ValueId v : g.inputs) {
    if (auto r = initializer_default(v); !r) return std::unexpected(r.error());
    if (!known[static_cast<std::size_t>(v)]) set(v, RuntimeValue::none());  // an optional left out
  }

  // The EP whose partition computed `v`; nullptr for graph inputs and initializers.
  auto producer_ep = [&](ValueId v) -> ExecutionProvider* {
    const NodeId producer = g.value(v).producer;
    if (producer < 0) return nullptr;
    const int partition = report.nodes[static_cast<std::size_t>(producer)].partition;
    return analysis_.eps.find(report.partitions[static_cast<std::size_t>(partition)].ep);
  };
  if (stats) stats->partition_us.assign(report.partitions.size(), 0);
  for (const Partition& p : report.partitions) {
    ExecutionProvider* ep = analysis_.eps.find(p.ep);
    std::vector<RuntimeValue> args;
    args.reserve(p.inputs.size());
    const bool host_is_fine = compiled_[static_cast<std::size_t>(p.index)]->takes_host_inputs();
    for (ValueId v : p.inputs) {
      auto arg = to_device(values[static_cast<std::size_t>(v)], *ep, producer_ep(v), host_is_fine);
      if (!arg) return std::unexpected(arg.error());
      args.push_back(std::move(*arg));
    }
    const auto t0 = Clock::now();
    auto outputs = run_partition(p, args);
    if (stats) stats->partition_us[static_cast<std::size_t>(p.index)] = ms_since(t0) * 1000.0;
    if (!outputs)
      return forward_error(std::move(outputs),
                           fmt::format("running partition '{}' of '{}'", p.name, analysis_.model.path.string()));
    if (outputs->size() != p.outputs.size())
      return fail(ErrorCode::kRuntime,
                  fmt::format("partition '{}' on the {} EP returned {} outputs, expected {}", p.name, p.ep,
                              outputs->size(), p.outputs.size()));
    for (std::size_t i = 0; i < p.outputs.size(); ++i) set(p.outputs[i], std::move((*outputs)[i]));
    for (std::size_t v : release_after_[static_cast<std::size_t>(p.index)]) values[v] = RuntimeValue();
  }
  std::map<std::string, RuntimeValue> result;
  for (ValueId v : g.outputs) {
    const Value& val = g.value(v);
    if (auto r = initializer_default(v); !r) return std::unexpected(r.error());
    if (!known[static_cast<std::size_t>(v)])
      return fail(ErrorCode::kRuntime, fmt::format("graph output '{}' was not computed", val.name));
    RuntimeValue out = values[static_cast<std::size_t>(v)];
    if (ExecutionProvider* producer = producer_ep(v)) {
      auto host = to_host(out, *producer);
      if (!host) return std::unexpected(host.error());
      out = std::move(*host);
    }
    result[val.name] = std::move(out);
  }
  return result;
}

void Session::set_profiling(bool on) {
  for (auto& c : compiled_) c->set_profiling(on);
}

}  // namespace nxrt
