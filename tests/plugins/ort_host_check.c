/* Runs an ORT plugin EP library inside the real ONNX Runtime, the second host that proves
 * nxrt's plugin ABI declarations are ORT's: written against nxrt's own header only, it finds
 * every OrtApi function by nxrt's slot positions, so a slot out of place fails here.
 *
 *   ort_host_check ORT_LIBRARY PLUGIN_LIBRARY MODEL [options]
 *     --ep NAME            the plugin EP to append (default test_plugin)
 *     --config KEY=VALUE   a session config entry (repeatable), e.g. ep.context_enable=1
 *     --input NAME=FILE    a float32 .npy input (repeatable)
 *     --output-dir DIR     write each float32 output there as NAME.npy
 *
 * Prints one line per step, "ok: ..." or "FAIL: ...", and exits 0 when every step passed,
 * 1 when one failed, 2 on a usage error. */
#define _DEFAULT_SOURCE /* realpath */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nxrt_ort_abi.h"

#define MAX_ITEMS 16
#define MAX_RANK 8

/* Session-side handles nxrt never serves; the driver only passes them around. */
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;

/* The signatures of the OrtApi slots nxrt leaves unimplemented but ORT serves (from ORT's
 * onnxruntime_c_api.h); the driver calls them through nxrt's slot positions. */
typedef OrtStatus* (*CreateEnvFn)(OrtLoggingLevel level, const char* log_id, OrtEnv** out);
typedef OrtStatus* (*CreateSessionFn)(const OrtEnv* env, const char* model_path, const OrtSessionOptions* options,
                                      OrtSession** out);
typedef OrtStatus* (*RunFn)(OrtSession* session, const OrtRunOptions* run_options, const char* const* input_names,
                            const OrtValue* const* inputs, size_t input_len, const char* const* output_names,
                            size_t output_names_len, OrtValue** outputs);
typedef OrtStatus* (*CreateSessionOptionsFn)(OrtSessionOptions** out);
typedef OrtStatus* (*AddSessionConfigEntryFn)(OrtSessionOptions* options, const char* key, const char* value);
typedef OrtStatus* (*SessionGetCountFn)(const OrtSession* session, size_t* out);
typedef OrtStatus* (*SessionGetNameFn)(const OrtSession* session, size_t index, OrtAllocator* allocator, char** out);
typedef OrtStatus* (*RegisterEpLibraryFn)(OrtEnv* env, const char* registration_name, const char* path);
typedef OrtStatus* (*UnregisterEpLibraryFn)(OrtEnv* env, const char* registration_name);
typedef OrtStatus* (*GetEpDevicesFn)(const OrtEnv* env, const OrtEpDevice* const** devices, size_t* num_devices);
typedef OrtStatus* (*AppendEpV2Fn)(OrtSessionOptions* options, OrtEnv* env, const OrtEpDevice* const* devices,
                                   size_t num_devices, const char* const* keys, const char* const* values,
                                   size_t num_options);
typedef void (*ReleaseEnvFn)(OrtEnv* env);
typedef void (*ReleaseSessionFn)(OrtSession* session);
typedef void (*ReleaseSessionOptionsFn)(OrtSessionOptions* options);

#define SLOT(type, name) ((type)(void (*)(void))g_api->name)

static const OrtApi* g_api;
static int g_failed;

typedef struct Tensor {
  char name[128];
  int64_t dims[MAX_RANK];
  size_t rank;
  float* data;
  size_t count;
} Tensor;

typedef struct Options {
  const char* ort_library;
  const char* plugin_library;
  const char* model;
  const char* ep_name;
  const char* output_dir;
  char* config[MAX_ITEMS];
  size_t num_config;
  char* inputs[MAX_ITEMS];
  size_t num_inputs;
} Options;

static void report(int ok, const char* format, ...) {
  va_list args;
  va_start(args, format);
  fputs(ok ? "ok: " : "FAIL: ", stdout);
  vprintf(format, args);
  fputc('\n', stdout);
  fflush(stdout);
  va_end(args);
  if (!ok) g_failed = 1;
}

/* Reports a step from ORT's status: ok when NULL, otherwise FAIL with ORT's message. */
static int step(OrtStatus* status, const char* what) {
  if (!status) {
    report(1, "%s", what);
    return 1;
  }
  report(0, "%s: ORT says (code %d) %s", what, (int)g_api->GetErrorCode(status), g_api->GetErrorMessage(status));
  g_api->ReleaseStatus(status);
  return 0;
}

/* ---- .npy files, float32 little-endian C order only ---- */

static int read_npy(const char* path, Tensor* t) {
  FILE* f = fopen(path, "rb");
  unsigned char preamble[10];
  char header[1024] = {0};
  if (!f) return 0;
  int ok = fread(preamble, 1, 10, f) == 10 && memcmp(preamble, "\x93NUMPY", 6) == 0 && preamble[6] == 1;
  const size_t header_len = ok ? (size_t)(preamble[8] | preamble[9] << 8) : 0;
  ok = ok && header_len < sizeof header && fread(header, 1, header_len, f) == header_len;
  ok = ok && strstr(header, "'descr': '<f4'") && strstr(header, "'fortran_order': False");
  const char* shape = ok ? strstr(header, "'shape': (") : NULL;
  t->rank = 0;
  t->count = 1;
  for (const char* at = shape ? shape + 10 : NULL; at && *at != ')' && t->rank < MAX_RANK;) {
    char* end = NULL;
    const long long d = strtoll(at, &end, 10);
    if (end == at) break;
    t->dims[t->rank++] = d;
    t->count *= (size_t)d;
    at = end + strspn(end, ", ");
  }
  ok = ok && shape;
  t->data = ok ? malloc(sizeof(float) * (t->count ? t->count : 1)) : NULL;
  ok = ok && fread(t->data, sizeof(float), t->count, f) == t->count;
  fclose(f);
  return ok;
}

static int write_npy(const char* path, const Tensor* t) {
  char header[256];
  int len = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
  for (size_t d = 0; d < t->rank; ++d)
    len += snprintf(header + len, sizeof header - (size_t)len, "%lld%s", (long long)t->dims[d], t->rank == 1 ? "," : d + 1 < t->rank ? ", " : "");
  len += snprintf(header + len, sizeof header - (size_t)len, "), }");
  while ((10 + len + 1) % 64) header[len++] = ' ';
  header[len++] = '\n';
  FILE* f = fopen(path, "wb");
  if (!f) return 0;
  const unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(len & 0xff),
                                      (unsigned char)(len >> 8)};
  int ok = fwrite(preamble, 1, 10, f) == 10 && fwrite(header, 1, (size_t)len, f) == (size_t)len &&
           fwrite(t->data, sizeof(float), t->count, f) == t->count;
  return fclose(f) == 0 && ok;
}

/* ---- the steps ---- */

static int load_ort(const char* path) {
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    report(0, "load ONNX Runtime: %s", dlerror());
    return 0;
  }
  const OrtApiBase* (*get_api_base)(void) = (const OrtApiBase* (*)(void))dlsym(library, "OrtGetApiBase");
  if (!get_api_base) {
    report(0, "load ONNX Runtime: '%s' does not export OrtGetApiBase", path);
    return 0;
  }
  const OrtApiBase* base = get_api_base();
  g_api = base->GetApi(NXRT_ORT_API_VERSION);
  report(g_api != NULL, "ONNX Runtime %s serves OrtApi version %d", base->GetVersionString(), NXRT_ORT_API_VERSION);
  return g_api != NULL;
}

/* Finds the plugin's EP device among ORT's and checks what the plugin told ORT about it. */
static const OrtEpDevice* find_ep_device(OrtEnv* env, const char* ep_name) {
  const OrtEpDevice* const* devices = NULL;
  size_t count = 0;
  if (!step(SLOT(GetEpDevicesFn, GetEpDevices)(env, &devices, &count), "GetEpDevices")) return NULL;
  for (size_t i = 0; i < count; ++i) {
    const char* name = g_api->EpDevice_EpName(devices[i]);
    const OrtHardwareDevice* hw = g_api->EpDevice_Device(devices[i]);
    printf("  device %zu: EP '%s' from '%s' on a %s device of vendor '%s'\n", i, name, g_api->EpDevice_EpVendor(devices[i]),
           g_api->HardwareDevice_Type(hw) == OrtHardwareDeviceType_CPU ? "cpu" : "non-cpu", g_api->HardwareDevice_Vendor(hw));
    if (strcmp(name, ep_name) == 0) {
      report(1, "ORT lists the %s EP's device (%zu EP devices in all)", ep_name, count);
      return devices[i];
    }
  }
  report(0, "ORT lists no device of the %s EP among its %zu EP devices", ep_name, count);
  return NULL;
}

static int configure(OrtSessionOptions* options, OrtEnv* env, const OrtEpDevice* device, const Options* opts) {
  for (size_t i = 0; i < opts->num_config; ++i) {
    char* eq = strchr(opts->config[i], '=');
    char what[256];
    *eq = '\0';
    snprintf(what, sizeof what, "session config %s=%s", opts->config[i], eq + 1);
    const int ok = step(SLOT(AddSessionConfigEntryFn, AddSessionConfigEntry)(options, opts->config[i], eq + 1), what);
    *eq = '=';
    if (!ok) return 0;
  }
  return step(SLOT(AppendEpV2Fn, SessionOptionsAppendExecutionProvider_V2)(options, env, &device, 1, NULL, NULL, 0),
              "SessionOptionsAppendExecutionProvider_V2 with the plugin's EP device");
}

static int save_output(const char* dir, const char* name, OrtValue* value) {
  OrtTensorTypeAndShapeInfo* info = NULL;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  Tensor t = {0};
  void* data = NULL;
  char path[1024];
  if (!step(g_api->GetTensorTypeAndShape(value, &info), "GetTensorTypeAndShape of an output")) return 0;
  OrtStatus* s = g_api->GetTensorElementType(info, &type);
  if (!s) s = g_api->GetDimensionsCount(info, &t.rank);
  if (!s && t.rank > MAX_RANK) s = g_api->CreateStatus(ORT_FAIL, "rank above 8");
  if (!s) s = g_api->GetDimensions(info, t.dims, t.rank);
  if (!s) s = g_api->GetTensorShapeElementCount(info, &t.count);
  g_api->ReleaseTensorTypeAndShapeInfo(info);
  if (!s && type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) s = g_api->CreateStatus(ORT_FAIL, "not a float tensor");
  if (!s) s = g_api->GetTensorMutableData(value, &data);
  if (s) return step(s, "read an output");
  t.data = data;
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    report(0, "create output folder %s: %s", dir, strerror(errno));
    return 0;
  }
  const int ok = write_npy(path, &t);
  report(ok, "output '%s' (%zu values, first %g) written to %s", name, t.count, t.count ? t.data[0] : 0.0, path);
  return ok;
}

/* Feeds the inputs, runs the session once and writes every output. */
static int run_session(OrtSession* session, const Options* opts) {
  Tensor inputs[MAX_ITEMS];
  OrtValue* values[MAX_ITEMS] = {NULL};
  const char* input_names[MAX_ITEMS];
  char* output_names[MAX_ITEMS] = {NULL};
  OrtValue* outputs[MAX_ITEMS] = {NULL};
  OrtMemoryInfo* cpu = NULL;
  OrtAllocator* allocator = NULL;
  size_t num_outputs = 0;
  memset(inputs, 0, sizeof inputs);
  int ok = step(g_api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &cpu), "CreateCpuMemoryInfo");
  for (size_t i = 0; ok && i < opts->num_inputs; ++i) {
    char* eq = strchr(opts->inputs[i], '=');
    Tensor* t = &inputs[i];
    snprintf(t->name, sizeof t->name, "%.*s", (int)(eq - opts->inputs[i]), opts->inputs[i]);
    if (!read_npy(eq + 1, t)) {
      report(0, "read input '%s': '%s' is not a float32 C-order .npy file", t->name, eq + 1);
      ok = 0;
      break;
    }
    input_names[i] = t->name;
    ok = step(g_api->CreateTensorWithDataAsOrtValue(cpu, t->data, sizeof(float) * t->count, t->dims, t->rank,
                                                    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &values[i]),
              "CreateTensorWithDataAsOrtValue for an input");
  }
  ok = ok && step(g_api->GetAllocatorWithDefaultOptions(&allocator), "GetAllocatorWithDefaultOptions");
  ok = ok && step(SLOT(SessionGetCountFn, SessionGetOutputCount)(session, &num_outputs), "SessionGetOutputCount");
  ok = ok && num_outputs <= MAX_ITEMS;
  for (size_t i = 0; ok && i < num_outputs; ++i)
    ok = step(SLOT(SessionGetNameFn, SessionGetOutputName)(session, i, allocator, &output_names[i]), "SessionGetOutputName");
  ok = ok && step(SLOT(RunFn, Run)(session, NULL, input_names, (const OrtValue* const*)values, opts->num_inputs,
                                   (const char* const*)output_names, num_outputs, outputs),
                  "Run");
  for (size_t i = 0; ok && opts->output_dir && i < num_outputs; ++i) ok = save_output(opts->output_dir, output_names[i], outputs[i]);
  for (size_t i = 0; i < num_outputs; ++i) {
    if (outputs[i]) g_api->ReleaseValue(outputs[i]);
    if (output_names[i]) g_api->AllocatorFree(allocator, output_names[i]);
  }
  for (size_t i = 0; i < opts->num_inputs; ++i) {
    if (values[i]) g_api->ReleaseValue(values[i]);
    free(inputs[i].data);
  }
  if (cpu) g_api->ReleaseMemoryInfo(cpu);
  return ok;
}

static int check(const Options* opts) {
  OrtEnv* env = NULL;
  OrtSessionOptions* options = NULL;
  OrtSession* session = NULL;
  int registered = 0;
  if (!load_ort(opts->ort_library)) return 0;
  int ok = step(SLOT(CreateEnvFn, CreateEnv)(ORT_LOGGING_LEVEL_WARNING, "ort_host_check", &env), "CreateEnv");
  ok = ok && (registered = step(SLOT(RegisterEpLibraryFn, RegisterExecutionProviderLibrary)(env, "nxrt_check",
                                                                                              opts->plugin_library),
                                "RegisterExecutionProviderLibrary loads the plugin (CreateEpFactories, GetSupportedDevices)"));
  const OrtEpDevice* device = ok ? find_ep_device(env, opts->ep_name) : NULL;
  ok = device && step(SLOT(CreateSessionOptionsFn, CreateSessionOptions)(&options), "CreateSessionOptions");
  ok = ok && configure(options, env, device, opts);
  ok = ok && step(SLOT(CreateSessionFn, CreateSession)(env, opts->model, options, &session),
                  "CreateSession (CreateEp, GetCapability, Compile)");
  ok = ok && run_session(session, opts);
  if (session) SLOT(ReleaseSessionFn, ReleaseSession)(session);
  if (options) SLOT(ReleaseSessionOptionsFn, ReleaseSessionOptions)(options);
  if (registered)
    ok = step(SLOT(UnregisterEpLibraryFn, UnregisterExecutionProviderLibrary)(env, "nxrt_check"),
              "UnregisterExecutionProviderLibrary (ReleaseEpFactory)") && ok;
  if (env) SLOT(ReleaseEnvFn, ReleaseEnv)(env);
  return ok;
}

static int usage(const char* message) {
  fprintf(stderr,
          "ort_host_check: %s\n"
          "usage: ort_host_check ORT_LIBRARY PLUGIN_LIBRARY MODEL [--ep NAME] [--config KEY=VALUE]...\n"
          "                      [--input NAME=FILE.npy]... [--output-dir DIR]\n",
          message);
  return 2;
}

int main(int argc, char** argv) {
  Options opts = {.ep_name = "test_plugin"};
  const char* positional[3] = {NULL, NULL, NULL};
  size_t num_positional = 0;
  for (int i = 1; i < argc; ++i) {
    const int has_value = i + 1 < argc;
    if (strcmp(argv[i], "--ep") == 0 && has_value) opts.ep_name = argv[++i];
    else if (strcmp(argv[i], "--output-dir") == 0 && has_value) opts.output_dir = argv[++i];
    else if (strcmp(argv[i], "--config") == 0 && has_value && opts.num_config < MAX_ITEMS && strchr(argv[i + 1], '='))
      opts.config[opts.num_config++] = argv[++i];
    else if (strcmp(argv[i], "--input") == 0 && has_value && opts.num_inputs < MAX_ITEMS && strchr(argv[i + 1], '='))
      opts.inputs[opts.num_inputs++] = argv[++i];
    else if (argv[i][0] != '-' && num_positional < 3) positional[num_positional++] = argv[i];
    else return usage(argv[i]);
  }
  if (num_positional != 3) return usage("needs ORT_LIBRARY, PLUGIN_LIBRARY and MODEL");
  opts.ort_library = positional[0];
  /* ORT resolves a relative library path against its own folder, not the working directory. */
  char plugin_path[4096];
  if (!realpath(positional[1], plugin_path)) return usage("PLUGIN_LIBRARY does not exist");
  opts.plugin_library = plugin_path;
  opts.model = positional[2];
  const int ok = check(&opts) && !g_failed;
  printf("%s\n", ok ? "PASS: ONNX Runtime loaded, ran and released the plugin" : "FAILED");
  return ok ? 0 : 1;
}
