// nxrt compile-epcontext: write models whose compiled partitions are EPContext nodes.
#include <fmt/format.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_common.h"
#include "commands.h"
#include "nxrt/session/epcontext_writer.h"
#include "render/table.h"

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
};

struct Job {
  std::string model;
  Expected<EpContextWriteResult> result = fail(ErrorCode::kRuntime, "not run");
};

// Applies ORT's session option names (EPCONTEXT.md) onto the write options.
Expected<void> apply_ort_option(const std::string& spec, EpContextWriteOptions& o, std::string& output) {
  const auto eq = spec.find('=');
  const std::string key = spec.substr(0, eq), value = eq == std::string::npos ? "" : spec.substr(eq + 1);
  if (key == "ep.context_embed_mode" && (value == "0" || value == "1")) {
    o.embed = value == "1";
    return {};
  }
  if (key == "ep.context_file_path" && !value.empty()) {
    output = value;
    return {};
  }
  if (key == "ep.context_node_name_prefix") {
    o.node_name_prefix = value;
    return {};
  }
  return fail(ErrorCode::kUsage, fmt::format("unknown or invalid option '{}'", spec), {},
              "accepted: ep.context_embed_mode=0|1, ep.context_file_path=PATH, ep.context_node_name_prefix=TEXT");
}

Expected<EpContextWriteResult> compile_one(const std::string& model, const std::filesystem::path& output,
                                           const EpContextWriteOptions& base, const SessionOptions& session_options) {
  auto session = Session::create(model, session_options);
  if (!session) return std::unexpected(session.error());
  EpContextWriteOptions o = base;
  o.output = output;
  return write_epcontext_model(**session, o);
}

int compile_epcontext(CompileFlags& f) {
  if (f.embed && f.external) return report(fail(ErrorCode::kUsage, "--embed and --external contradict each other").error());
  EpContextWriteOptions base;
  base.embed = f.embed;
  base.force = f.force;
  base.allow_empty = f.allow_empty;
  base.node_name_prefix = f.node_prefix;
  std::string output = f.output;
  for (const auto& spec : f.config)
    if (auto r = apply_ort_option(spec, base, output); !r) return report(r.error());
  if (f.models.size() > 1 && !output.empty())
    return report(fail(ErrorCode::kUsage, "-o names one output but several models were given", {},
                        "use --output-dir DIR for several models").error());
  auto session_options = f.ep.session_options();
  if (!session_options) return report(session_options.error());

  std::vector<Job> jobs;
  for (const auto& m : f.models) jobs.push_back(Job{m});
  auto output_of = [&](const std::string& model) -> std::filesystem::path {
    if (!output.empty()) return output;
    const std::filesystem::path def = default_context_output(model);
    return f.output_dir.empty() ? def : std::filesystem::path(f.output_dir) / def.filename();
  };
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++)
      jobs[i].result = compile_one(jobs[i].model, output_of(jobs[i].model), base, *session_options);
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::min<int>(f.jobs, static_cast<int>(jobs.size())); ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();

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
  cmd->add_option("-o,--output", f->output, "output model (default: <stem>_ctx.onnx beside the input)");
  cmd->add_option("--output-dir", f->output_dir, "folder for the outputs of several models");
  f->ep.add_to(*cmd);
  cmd->add_flag("--embed", f->embed, "store payloads inline in the model (embed_mode=1)");
  cmd->add_flag("--external", f->external,
                "store payloads in side files <stem>_<ep>.bin (embed_mode=0); this is the default, as in ONNX Runtime");
  cmd->add_option("--config", f->config,
                  "ONNX Runtime option names: ep.context_embed_mode=0|1, ep.context_file_path=PATH, "
                  "ep.context_node_name_prefix=TEXT")
      ->type_name("KEY=VALUE");
  cmd->add_option("--node-name-prefix", f->node_prefix, "prefix for EPContext node names");
  cmd->add_flag("--force", f->force, "overwrite existing output files (never the input model)");
  cmd->add_flag("--allow-empty", f->allow_empty, "succeed even when no partition can be saved as a context");
  cmd->add_option("-j,--jobs", f->jobs, "compile this many models at once")->check(CLI::PositiveNumber);
  cmd->add_flag("--json", f->json, "print JSON instead of a table");
  return [f] { return compile_epcontext(*f); };
}

}  // namespace nxrt::cli
