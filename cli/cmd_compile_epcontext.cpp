// nxrt compile-epcontext: write models whose compiled partitions are EPContext nodes.
#include <fmt/format.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_common.h"
#include "commands.h"
#include "nxrt/io/atomic_file.h"
#include "nxrt/session/epcontext_writer.h"
#include "render/table.h"
#include "terminal.h"

namespace nxrt::cli {
namespace {

struct CompileFlags {
  std::vector<std::string> models;
  std::string output;
  std::string output_dir;
  EpFlags ep;
  bool embed = false;
  bool external = false;
  std::vector<std::string> config;  // ORT option aliases
  std::string node_prefix;
  bool force = false;
  bool allow_empty = false;
  int jobs = 1;
  bool json = false;
  bool quiet = false;
};

struct Job {
  std::string model;
  Expected<EpContextWriteResult> result = fail(ErrorCode::kRuntime, "not run");
};

// Applies ORT's session option names (EPCONTEXT.md); each may not contradict its nxrt flag.
Expected<void> apply_ort_option(const std::string& spec, CompileFlags& f) {
  const auto eq = spec.find('=');
  const std::string key = spec.substr(0, eq), value = eq == std::string::npos ? "" : spec.substr(eq + 1);
  auto conflict = [&](std::string_view flag) {
    return fail(ErrorCode::kUsage, fmt::format("--config {} contradicts {}", spec, flag), {}, "give only one of them");
  };
  if (key == "ep.context_embed_mode" && (value == "0" || value == "1")) {
    if ((value == "1" && f.external) || (value == "0" && f.embed)) return conflict(f.embed ? "--embed" : "--external");
    (value == "1" ? f.embed : f.external) = true;
    return {};
  }
  if (key == "ep.context_file_path" && !value.empty()) {
    if (!f.output.empty() && f.output != value) return conflict("-o");
    if (!f.output_dir.empty()) return conflict("--output-dir");
    f.output = value;
    return {};
  }
  if (key == "ep.context_node_name_prefix") {
    if (!f.node_prefix.empty() && f.node_prefix != value) return conflict("--node-name-prefix");
    f.node_prefix = value;
    return {};
  }
  return fail(ErrorCode::kUsage, fmt::format("unknown or invalid option '{}'", spec), {},
              "accepted: ep.context_embed_mode=0|1, ep.context_file_path=PATH, ep.context_node_name_prefix=TEXT");
}

// Where each model's output goes; two models may not share one.
Expected<std::vector<std::filesystem::path>> output_paths(const CompileFlags& f) {
  if (f.models.size() > 1 && !f.output.empty())
    return fail(ErrorCode::kUsage, "-o names one output but several models were given", {},
                "use --output-dir DIR for several models");
  std::vector<std::filesystem::path> out;
  std::map<std::filesystem::path, std::string> seen;
  for (const auto& m : f.models) {
    std::filesystem::path p = f.output;
    if (p.empty()) {
      p = default_context_output(m);
      if (!f.output_dir.empty()) p = std::filesystem::path(f.output_dir) / p.filename();
    }
    // Resolved where it can be; a path that cannot (a name too long) fails when written.
    std::error_code ec;
    auto key = std::filesystem::weakly_canonical(p, ec);
    if (ec) key = std::filesystem::absolute(p, ec).lexically_normal();
    if (auto [it, fresh] = seen.emplace(key, m); !fresh)
      return fail(ErrorCode::kUsage, fmt::format("'{}' and '{}' would both be written to '{}'", it->second, m, p.string()),
                  {}, "compile models with the same file name into different --output-dir folders");
    out.push_back(std::move(p));
  }
  return out;
}

Expected<EpContextWriteResult> compile_one(const std::string& model, const std::filesystem::path& output,
                                           const EpContextWriteOptions& base, const SessionOptions& session_options) {
  auto session = Session::create(model, session_options);
  if (!session) return std::unexpected(session.error());
  // The output folder is made only once there is something to write into it.
  if (const auto dir = output.parent_path(); !dir.empty())
    if (auto made = create_output_folder(dir); !made) return std::unexpected(made.error());
  EpContextWriteOptions o = base;
  o.output = output;
  return write_epcontext_model(**session, o);
}

int compile_epcontext(CompileFlags& f) {
  if (f.embed && f.external) return report(fail(ErrorCode::kUsage, "--embed and --external contradict each other").error());
  for (const auto& spec : f.config)
    if (auto r = apply_ort_option(spec, f); !r) return report(r.error());
  EpContextWriteOptions base;
  base.embed = f.embed;
  base.force = f.force;
  base.allow_empty = f.allow_empty;
  base.node_name_prefix = f.node_prefix;
  auto outputs = output_paths(f);
  if (!outputs) return report(outputs.error());
  auto session_options = f.ep.session_options();
  if (!session_options) return report(session_options.error());
  // ORT's session options that ask EPs (plugin EPs read them) for inline EPContext nodes.
  session_options->config.options["ep.context_enable"] = "1";
  session_options->config.options["ep.context_embed_mode"] = "1";

  std::vector<Job> jobs;
  for (const auto& m : f.models) jobs.push_back(Job{m});
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> finished{0};
  Progress progress(!f.quiet, fmt::format("compile-epcontext: compiling {} model{}", jobs.size(), jobs.size() == 1 ? "" : "s"));
  auto worker = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      try {
        jobs[i].result = compile_one(jobs[i].model, (*outputs)[i], base, *session_options);
      } catch (const std::exception& e) {  // an exception leaving a thread would end the process
        jobs[i].result = std::unexpected(error_from_exception(e));
      }
      progress.set(fmt::format("compile-epcontext: {} of {} models compiled", ++finished, jobs.size()));
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::min<int>(f.jobs, static_cast<int>(jobs.size())); ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  progress.done();

  int exit_code = 0;
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  Table table({"MODEL", "OUTPUT", "EPCONTEXT NODE", "EP", "REPLACES", "PAYLOAD", "LOCATION"});
  for (Job& job : jobs) {
    if (!job.result) {
      exit_code = std::max(exit_code, report(job.result.error()));
      json.push_back({{"model", job.model}, {"ok", false}, {"error", job.result.error().what}});
      continue;
    }
    const EpContextWriteResult& r = *job.result;
    nlohmann::ordered_json contexts = nlohmann::ordered_json::array();
    for (const WrittenContext& c : r.contexts) {
      table.add({job.model, r.output.string(), c.node_name, c.ep, fmt::format("{} nodes", c.node_count),
                 human_bytes(static_cast<double>(c.payload_bytes)), c.location});
      contexts.push_back({{"node", c.node_name}, {"partition", c.partition}, {"ep", c.ep}, {"replaces_nodes", c.node_count},
                          {"payload_bytes", c.payload_bytes}, {"location", c.location}});
    }
    std::vector<std::string> side;
    for (const auto& p : r.side_files) side.push_back(p.string());
    json.push_back({{"model", job.model}, {"ok", true}, {"output", r.output.string()}, {"side_files", side},
                    {"contexts", contexts}, {"kept_nodes", r.kept_nodes}, {"compatibility", r.compatibility}});
  }
  if (exit_code != 0) remove_unused_output_folders();  // a folder made for an output that never came
  if (f.json)
    fmt::print("{}\n", nlohmann::ordered_json{{"results", json}}.dump(2));
  else if (!table.empty())
    fmt::print("{}", table.render());
  return exit_code;
}

}  // namespace

Action add_compile_epcontext(CLI::App& app) {
  auto f = std::make_shared<CompileFlags>();
  auto* cmd = app.add_subcommand(
      "compile-epcontext",
      "partition and compile models, writing ONNX models whose compiled partitions are com.microsoft::EPContext nodes");
  cmd->add_option("MODEL", f->models, "the .onnx model(s)")->required();
  auto* output = cmd->add_option("-o,--output", f->output, "output model (default: <stem>_ctx.onnx beside the input)");
  cmd->add_option("--output-dir", f->output_dir, "write <stem>_ctx.onnx of each model into this folder (created if needed)")
      ->excludes(output);
  f->ep.add_to(*cmd);
  f->ep.add_target_arch_to(*cmd);
  cmd->add_flag("--embed", f->embed, "store payloads inline in the model (embed_mode=1)");
  cmd->add_flag("--external", f->external,
                "store payloads in side files beside the output, <output stem>_<ep>.bin (embed_mode=0); the default, as "
                "in ONNX Runtime");
  cmd->add_option("--config", f->config,
                  "ONNX Runtime option names: ep.context_embed_mode=0|1, ep.context_file_path=PATH, "
                  "ep.context_node_name_prefix=TEXT")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--node-name-prefix", f->node_prefix, "prefix for EPContext node names");
  cmd->add_flag("--force", f->force, "overwrite existing output files (never the input model)");
  cmd->add_flag("--allow-empty", f->allow_empty, "succeed even when no partition can be saved as a context");
  cmd->add_option("-j,--jobs", f->jobs, "compile this many models at once")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_flag("--json", f->json, "print JSON instead of a table");
  cmd->add_flag("-q,--quiet", f->quiet, "no progress line on stderr");
  return [f] { return compile_epcontext(*f); };
}

}  // namespace nxrt::cli
