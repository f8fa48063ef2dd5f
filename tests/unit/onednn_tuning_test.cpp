// The oneDNN EP's list of implementations to time: each kernel once, and the descriptor kept
// is the kernel it names, even when oneDNN's primitive cache already holds the problem.
#include <catch2/catch.hpp>

#if NXRT_HAVE_ONEDNN
#include <set>
#include <string>
#include <vector>

#include "onednn/plan_builder.h"

namespace nxrt::test {
namespace {

using Pd = dnnl::convolution_forward::primitive_desc;

std::vector<std::string> names_of(const std::vector<Pd>& pds) {
  std::vector<std::string> names;
  for (const Pd& pd : pds) names.emplace_back(pd.impl_info_str());
  return names;
}

}  // namespace

TEST_CASE("onednn lists each implementation once, whatever the primitive cache holds", "[onednn]") {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  auto any = [](const dnnl::memory::dims& d) {
    return dnnl::memory::desc(d, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
  };
  // A 3x3 convolution of a shape no other test uses: several kernels take it.
  const dnnl::convolution_forward::desc op(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                           any({1, 24, 11, 13}), any({40, 24, 3, 3}), any({1, 40, 11, 13}), {1, 1},
                                           {1, 1}, {1, 1});
  const std::vector<std::function<Pd()>> make = {[&] { return Pd(op, onednn::PlanBuilder::base_attr(), engine); }};
  const std::vector<Pd> before = onednn::list_implementations<Pd>(make);
  const std::vector<std::string> names = names_of(before);
  REQUIRE(names.size() >= 2);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());

  // Primitives of every kernel now sit in oneDNN's cache (as after timing them): a second
  // listing still names the same kernels in the same order, and each descriptor builds the
  // kernel it names.
  for (const Pd& pd : before) dnnl::convolution_forward{pd};
  const std::vector<Pd> after = onednn::list_implementations<Pd>(make);
  CHECK(names_of(after) == names);
  for (const Pd& pd : after) {
    const dnnl::convolution_forward primitive(pd);
    const char* built = nullptr;
    REQUIRE(dnnl_primitive_desc_query(primitive.get_primitive_desc(), dnnl_query_impl_info_str, 0, &built) ==
            dnnl_success);
    CHECK(std::string(built) == pd.impl_info_str());
  }
}

}  // namespace nxrt::test
#endif
