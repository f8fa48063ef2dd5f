// Argument checks at the top of every host function: a plugin that passes NULL, or a handle of
// another kind, gets an error status naming the table, the function and the argument.
#pragma once

#include <string_view>
#include <type_traits>

#include "host_types.h"

namespace nxrt::ort_plugin {

template <class T>
concept HostHandle = requires { T::kKind; };

// Whether `p` is usable as a T: not NULL and, for the host's own handles, of T's kind.
template <class T>
bool usable(const T* p) {
  if constexpr (HostHandle<T>) return p && p->handle_magic == kHandleMagic && p->handle_kind == T::kKind;
  else return p != nullptr;
}
template <class T>
  requires(!std::is_pointer_v<T>)
bool usable(const T&) {
  return true;  // counts, sizes, enums
}

// The status for argument `index` of `function`, whose names are `names` ("graph, out").
OrtStatus* bad_argument(std::string_view table, std::string_view function, std::string_view names, std::size_t index,
                        const void* given, const char* wanted);

template <class T>
const char* kind_name_of() {
  if constexpr (HostHandle<T>) return kHandleKindNames[static_cast<std::size_t>(T::kKind)];
  else return nullptr;
}

// The first argument that is not usable, as a status; NULL when all are. With kNullAllowed,
// NULL passes (optional arguments) and only a handle of the wrong kind is refused.
template <bool kNullAllowed, class... Args>
OrtStatus* check_arguments(std::string_view table, std::string_view function, std::string_view names, const Args&... args) {
  OrtStatus* status = nullptr;
  std::size_t index = 0;
  auto check = [&](const auto& arg) {
    using Arg = std::remove_cvref_t<decltype(arg)>;
    using Pointee = std::remove_cvref_t<std::remove_pointer_t<Arg>>;
    bool is_null = false;
    if constexpr (std::is_pointer_v<Arg>) is_null = arg == nullptr;
    if (!status && !(kNullAllowed && is_null) && !usable(arg)) {
      const void* given = nullptr;
      if constexpr (std::is_pointer_v<std::remove_cvref_t<decltype(arg)>>) given = arg;
      status = bad_argument(table, function, names, index, given, kind_name_of<Pointee>());
    }
    ++index;
  };
  (check(args), ...);
  return status;
}

template <class... Args>
bool all_usable(const Args&... args) {
  return (usable(args) && ...);
}

}  // namespace nxrt::ort_plugin

// Returns an error status from a host function when an argument is NULL or of the wrong kind.
// Each table's namespace defines kTable ("OrtApi", "OrtEpApi", "OrtModelEditorApi").
#define NXRT_CHECK_ARGS(...)                                                                                        \
  do {                                                                                                              \
    if (OrtStatus* bad_ = ::nxrt::ort_plugin::check_arguments<false>(kTable, __func__, #__VA_ARGS__, __VA_ARGS__)) return bad_; \
  } while (0)

// The same for arguments that may be NULL: refuses only a handle of the wrong kind.
#define NXRT_CHECK_OPTIONAL_ARGS(...)                                                                                     \
  do {                                                                                                                    \
    if (OrtStatus* bad_ = ::nxrt::ort_plugin::check_arguments<true>(kTable, __func__, #__VA_ARGS__, __VA_ARGS__)) return bad_; \
  } while (0)

// For host functions that return no status (ORT's signature leaves no way to report): an unusable
// argument gets `fallback` back instead of a crash.
#define NXRT_CHECK_ARGS_OR(fallback, ...)                                  \
  do {                                                                     \
    if (!::nxrt::ort_plugin::all_usable(__VA_ARGS__)) return fallback;     \
  } while (0)
