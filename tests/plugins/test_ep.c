/* A small ONNX Runtime plugin EP for nxrt's tests, written against nxrt's own ABI header;
 * ONNX Runtime itself runs it too (scripts/plugin-vs-ort.sh).
 * It claims float Add, Mul and Relu nodes as one fused group, compiles them into a little
 * program (constants copied in), computes it, and writes EPContext nodes whose payload is
 * that program; and it claims each Neg node alone (EpGraphSupportInfo_AddSingleNode), which
 * the host runs with the Neg kernel of the EP's kernel registry. Built once per variant:
 *   NXRT_TEST_EP_MISSING_SYMBOL  does not export ReleaseEpFactory
 *   NXRT_TEST_EP_TOO_NEW         asks the host for ORT API 25
 *   NXRT_TEST_EP_NO_DEVICES      supports none of the host's devices
 *   NXRT_TEST_EP_FAIL_COMPILE    Compile returns an error
 *   NXRT_TEST_EP_FAIL_COMPUTE    Compute returns an error
 *   NXRT_TEST_EP_NO_FACTORIES    CreateEpFactories makes no factory
 *   NXRT_TEST_EP_FAIL_CREATE_EP  CreateEp returns an error
 *   NXRT_TEST_EP_NULL_COMPILE    the OrtEp leaves Compile NULL
 *   NXRT_TEST_EP_FAIL_CAPABILITY GetCapability returns an error
 *   NXRT_TEST_EP_NO_KERNEL_REGISTRY    claims Neg alone but has no kernel registry (GetKernelRegistry NULL)
 *   NXRT_TEST_EP_KERNEL_WRONG_VERSION  registers its Neg kernel for versions 6-12 (models use Neg-13)
 *   NXRT_TEST_EP_KERNEL_FAIL_COMPUTE   the Neg kernel's Compute returns an error
 *   NXRT_TEST_EP_NULL_DATA_TRANSFER  the factory leaves CreateDataTransfer NULL
 *   NXRT_TEST_EP_DUPLICATE_CLAIM GetCapability fuses the fused group's last node once more, alone
 * and one per plugin fault the host must contain (tests/cli/test_plugin_faults.py):
 *   NXRT_TEST_EP_NULL_NAME         the factory's GetName returns NULL
 *   NXRT_TEST_EP_FOREIGN_DEVICE    GetSupportedDevices returns the host's hardware device as an EP device
 *   NXRT_TEST_EP_NULL_EP           CreateEp succeeds but leaves the OrtEp NULL
 *   NXRT_TEST_EP_NOT_A_NODE        GetCapability passes the graph itself where a node belongs
 *   NXRT_TEST_EP_EMPTY_GROUP       GetCapability fuses a group of no nodes
 *   NXRT_TEST_EP_API_MISUSE        GetCapability calls host functions with NULL and wrong-kind arguments
 *   NXRT_TEST_EP_NULL_COMPUTE_INFO Compile succeeds but leaves the OrtNodeComputeInfo NULL
 *   NXRT_TEST_EP_GRAPH_NODE_AS_CONTEXT  Compile returns a node of the graph as its EPContext node
 *   NXRT_TEST_EP_CONTEXT_NO_PAYLOAD     the EPContext node has no ep_cache_context attribute
 *   NXRT_TEST_EP_NO_OUTPUT         Compute succeeds without allocating its outputs
 *   NXRT_TEST_EP_WRONG_SHAPE       Compute asks for outputs of the wrong shape and ignores the refusal */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nxrt_ort_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define EP_NAME "test_plugin"
#define MAX_STEPS 64
#define MAX_VALUES 128
#define MAX_DIMS 8

static const OrtApi* g_api;
static const OrtEpApi* g_ep_api;
static const OrtModelEditorApi* g_editor;

#define RETURN_IF_ERROR(expr)      \
  do {                             \
    OrtStatus* status_ = (expr);   \
    if (status_) return status_;   \
  } while (0)

static OrtStatus* fail(const char* message) { return g_api->CreateStatus(ORT_EP_FAIL, message); }

/* ---- the compiled program ---- */

typedef struct Tensor {
  char name[128];
  int64_t dims[MAX_DIMS];
  size_t rank;
  float* data;  /* owned for constants and intermediates */
  int64_t count;
} Tensor;

typedef struct Step {
  char op[16];
  char inputs[2][128];
  size_t num_inputs;
  char output[128];
} Step;

typedef struct Program {
  OrtNodeComputeInfo info; /* first member: the host hands this pointer back */
  char name[128];
  Tensor constants[MAX_VALUES];
  size_t num_constants;
  Step steps[MAX_STEPS];
  size_t num_steps;
  char inputs[MAX_VALUES][128];  /* the fused node's inputs, in kernel-context order */
  size_t num_inputs;
  char outputs[MAX_VALUES][128];
  size_t num_outputs;
} Program;

static void free_program(Program* p) {
  for (size_t i = 0; i < p->num_constants; ++i) free(p->constants[i].data);
  free(p);
}

/* Text form, the EPContext payload: "const NAME RANK D.. N V..", "step OP OUT N IN..". */
static char* serialize(const Program* p) {
  size_t cap = 4096, len = 0;
  char* out = malloc(cap);
#define EMIT(...)                                                        \
  do {                                                                   \
    int n_ = snprintf(NULL, 0, __VA_ARGS__);                             \
    while (len + (size_t)n_ + 1 > cap) out = realloc(out, cap *= 2);     \
    len += (size_t)sprintf(out + len, __VA_ARGS__);                      \
  } while (0)
  EMIT("nxrt-test-ep 1\n");
  for (size_t c = 0; c < p->num_constants; ++c) {
    const Tensor* t = &p->constants[c];
    EMIT("const %s %zu", t->name, t->rank);
    for (size_t d = 0; d < t->rank; ++d) EMIT(" %lld", (long long)t->dims[d]);
    EMIT(" %lld", (long long)t->count);
    for (int64_t i = 0; i < t->count; ++i) EMIT(" %.9g", t->data[i]);
    EMIT("\n");
  }
  for (size_t s = 0; s < p->num_steps; ++s) {
    const Step* st = &p->steps[s];
    EMIT("step %s %s %zu", st->op, st->output, st->num_inputs);
    for (size_t i = 0; i < st->num_inputs; ++i) EMIT(" %s", st->inputs[i]);
    EMIT("\n");
  }
#undef EMIT
  return out;
}

static int deserialize(Program* p, const char* text) {
  const char* at = text;
  int used = 0;
  char kind[16];
  if (strncmp(at, "nxrt-test-ep 1\n", 15) != 0) return 0;
  at += 15;
  while (sscanf(at, "%15s%n", kind, &used) == 1) {
    at += used;
    if (strcmp(kind, "const") == 0) {
      Tensor* t = &p->constants[p->num_constants++];
      long long v = 0;
      sscanf(at, "%127s %zu%n", t->name, &t->rank, &used);
      at += used;
      for (size_t d = 0; d < t->rank; ++d, at += used) sscanf(at, "%lld%n", &v, &used), t->dims[d] = v;
      sscanf(at, "%lld%n", &v, &used);
      at += used;
      t->count = v;
      t->data = malloc(sizeof(float) * (size_t)(t->count ? t->count : 1));
      for (int64_t i = 0; i < t->count; ++i, at += used) sscanf(at, "%f%n", &t->data[i], &used);
    } else if (strcmp(kind, "step") == 0) {
      Step* st = &p->steps[p->num_steps++];
      sscanf(at, "%15s %127s %zu%n", st->op, st->output, &st->num_inputs, &used);
      at += used;
      for (size_t i = 0; i < st->num_inputs; ++i, at += used) sscanf(at, "%127s%n", st->inputs[i], &used);
    } else {
      return 0;
    }
  }
  return 1;
}

/* ---- compute ---- */

typedef struct Env {
  Tensor values[MAX_VALUES];
  size_t count;
} Env;

static Tensor* lookup(Env* env, const char* name) {
  for (size_t i = 0; i < env->count; ++i)
    if (strcmp(env->values[i].name, name) == 0) return &env->values[i];
  return NULL;
}

static OrtStatus* create_state(OrtNodeComputeInfo* this_ptr, OrtNodeComputeContext* ctx, void** state) {
  (void)ctx;
  *state = this_ptr;
  return NULL;
}

static void release_state(OrtNodeComputeInfo* this_ptr, void* state) {
  (void)this_ptr;
  (void)state;
}

static OrtStatus* compute(OrtNodeComputeInfo* this_ptr, void* state, OrtKernelContext* context) {
  Program* p = (Program*)state;
  (void)this_ptr;
#ifdef NXRT_TEST_EP_FAIL_COMPUTE
  if (p) return fail("test_plugin: Compute failed on purpose (built with NXRT_TEST_EP_FAIL_COMPUTE)");
#endif
  Env env = {0};
  for (size_t c = 0; c < p->num_constants; ++c) env.values[env.count++] = p->constants[c];
  for (size_t i = 0; i < p->num_inputs; ++i) {
    const OrtValue* v = NULL;
    Tensor* t = &env.values[env.count++];
    const void* data = NULL;
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    const int64_t* dims = NULL;
    size_t count = 1;
    RETURN_IF_ERROR(g_api->KernelContext_GetInput(context, i, &v));
    /* The last slot of API version 24: a wrong table position would call another function. */
    RETURN_IF_ERROR(g_api->GetTensorElementTypeAndShapeDataReference(v, &type, &dims, &t->rank));
    if (type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) return fail("test_plugin: Compute got an input that is not float32");
    if (t->rank > MAX_DIMS) return fail("test_plugin: Compute got an input of rank above MAX_DIMS");
    for (size_t d = 0; d < t->rank; ++d) {
      t->dims[d] = dims[d];
      count *= (size_t)dims[d];
    }
    RETURN_IF_ERROR(g_api->GetTensorData(v, &data));
    snprintf(t->name, sizeof t->name, "%s", p->inputs[i]);
    t->data = (float*)data;
    t->count = (int64_t)count;
  }
  size_t first_owned = env.count;
  OrtStatus* status = NULL;
  for (size_t s = 0; s < p->num_steps && !status; ++s) {
    const Step* st = &p->steps[s];
    Tensor* a = lookup(&env, st->inputs[0]);
    Tensor* b = st->num_inputs > 1 ? lookup(&env, st->inputs[1]) : NULL;
    if (!a || (st->num_inputs > 1 && !b)) {
      status = fail("test_plugin: a step reads a value the program does not have");
      break;
    }
    const Tensor* shape = b && b->count > a->count ? b : a;
    if (b && a->count != b->count && a->count != 1 && b->count != 1) {
      status = fail("test_plugin: Add/Mul operands must have equal sizes or one element");
      break;
    }
    Tensor* out = &env.values[env.count++];
    *out = *shape;
    snprintf(out->name, sizeof out->name, "%s", st->output);
    out->data = malloc(sizeof(float) * (size_t)(out->count ? out->count : 1));
    for (int64_t i = 0; i < out->count; ++i) {
      const float x = a->data[a->count == 1 ? 0 : i];
      const float y = b ? b->data[b->count == 1 ? 0 : i] : 0.0f;
      if (strcmp(st->op, "Add") == 0) out->data[i] = x + y;
      else if (strcmp(st->op, "Mul") == 0) out->data[i] = x * y;
      else if (strcmp(st->op, "Relu") == 0) out->data[i] = x > 0 ? x : 0;
      else out->data[i] = -x;
    }
  }
  for (size_t o = 0; o < p->num_outputs && !status; ++o) {
    Tensor* t = lookup(&env, p->outputs[o]);
    OrtValue* v = NULL;
    void* data = NULL;
    if (!t) {
      status = fail("test_plugin: an output is not computed by the program");
      break;
    }
#if defined(NXRT_TEST_EP_NO_OUTPUT)
    (void)v, (void)data;
    break;
#elif defined(NXRT_TEST_EP_WRONG_SHAPE)
    int64_t reversed[MAX_DIMS];
    for (size_t d = 0; d < t->rank; ++d) reversed[d] = t->dims[t->rank - 1 - d];
    OrtStatus* refused = g_api->KernelContext_GetOutput(context, o, reversed, t->rank, &v);
    if (refused) g_api->ReleaseStatus(refused); /* the fault: the plugin carries on regardless */
    (void)data;
    break;
#else
    status = g_api->KernelContext_GetOutput(context, o, t->dims, t->rank, &v);
    if (!status) status = g_api->GetTensorMutableData(v, &data);
    if (!status) memcpy(data, t->data, sizeof(float) * (size_t)t->count);
#endif
  }
  for (size_t i = first_owned; i < env.count; ++i) free(env.values[i].data);
  return status;
}

/* ---- the EP ---- */

typedef struct TestEp {
  OrtEp ep;
  const OrtLogger* logger;
  int make_context;  /* session option ep.context_enable=1 */
  OrtKernelRegistry* kernels;
} TestEp;

static const char* ep_name(const OrtEp* ep) {
  (void)ep;
  return EP_NAME;
}

static const char* node_op(const OrtNode* node) {
  const char* op = NULL;
  g_api->Node_GetOperatorType(node, &op);
  return op;
}

static int is_float_tensor(const OrtValueInfo* info) {
  const OrtTypeInfo* type = NULL;
  const OrtTensorTypeAndShapeInfo* tensor = NULL;
  ONNXTensorElementDataType elem = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  if (!info || g_api->GetValueInfoTypeInfo(info, &type)) return 0;
  if (g_api->CastTypeInfoToTensorInfo(type, &tensor) || !tensor) return 0;
  if (g_api->GetTensorElementType(tensor, &elem)) return 0;
  return elem == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
}

/* Whether the EP runs this node: 1 fused, 2 alone, 0 not. */
static int supports(const OrtNode* node) {
  const char* op = node_op(node);
  const char* domain = NULL;
  const OrtValueInfo* outputs[1] = {NULL};
  size_t n = 0;
  g_api->Node_GetDomain(node, &domain);
  if (domain && domain[0] != '\0') return strcmp(op, "EPContext") == 0 ? 3 : 0;
  g_api->Node_GetNumOutputs(node, &n);
  if (n != 1 || g_api->Node_GetOutputs(node, outputs, 1) || !is_float_tensor(outputs[0])) return 0;
  if (strcmp(op, "Add") == 0 || strcmp(op, "Mul") == 0 || strcmp(op, "Relu") == 0) return 1;
  if (strcmp(op, "Neg") == 0) return 2;
  return 0;
}

static int is_own_context(const OrtNode* node) {
  const OrtOpAttr* attr = NULL;
  char source[64] = {0};
  size_t size = 0;
  if (g_api->Node_GetAttributeByName(node, "source", &attr) || !attr) return 0;
  if (g_api->ReadOpAttr(attr, ORT_OP_ATTR_STRING, source, sizeof source - 1, &size)) return 0;
  return strcmp(source, EP_NAME) == 0;
}

/* Neg runs alone, with the registry's kernel; the host must find that kernel for the node too. */
static OrtStatus* claim_alone(OrtEpGraphSupportInfo* support, const OrtNode* node) {
  const OrtKernelDef* kernel = NULL;
  RETURN_IF_ERROR(g_ep_api->EpGraphSupportInfo_LookUpKernel(support, node, &kernel));
#if !defined(NXRT_TEST_EP_NO_KERNEL_REGISTRY) && !defined(NXRT_TEST_EP_KERNEL_WRONG_VERSION)
  if (!kernel || strcmp(g_ep_api->KernelDef_GetOperatorType(kernel), "Neg") != 0)
    return fail("test_plugin: EpGraphSupportInfo_LookUpKernel found no Neg kernel for a Neg node");
#endif
  return g_ep_api->EpGraphSupportInfo_AddSingleNode(support, node);
}

#ifdef NXRT_TEST_EP_API_MISUSE
/* Calls host functions the way a buggy plugin would and returns one status that lists what the
 * host answered to each: every call must be refused, none may crash. */
static OrtStatus* misuse_api(const OrtGraph* graph) {
  char report[4096] = "test_plugin: the host answered";
  size_t n = 0;
  const char* text = NULL;
  const OrtNode* node = NULL;
  OrtStatus* answers[6];
  answers[0] = g_api->Graph_GetNumNodes(NULL, &n);
  answers[1] = g_api->Graph_GetNumNodes(graph, NULL);
  answers[2] = g_api->Node_GetName((const OrtNode*)graph, &text);
  answers[3] = g_api->Graph_GetNodes(graph, NULL, 5);
  answers[4] = g_api->KernelContext_GetInputCount((const OrtKernelContext*)graph, &n);
  answers[5] = g_api->Graph_GetParentNode((const OrtGraph*)g_api, &node);
  for (size_t i = 0; i < sizeof answers / sizeof answers[0]; ++i) {
    const size_t used = strlen(report);
    snprintf(report + used, sizeof report - used, "%s%s", i ? "; " : ": ",
             answers[i] ? g_api->GetErrorMessage(answers[i]) : "(success)");
    g_api->ReleaseStatus(answers[i]);
  }
  g_api->ReleaseStatus((OrtStatus*)graph); /* releasing what the host owns is ignored */
  return fail(report);
}
#endif

static OrtStatus* get_capability(OrtEp* this_ptr, const OrtGraph* graph, OrtEpGraphSupportInfo* support) {
  TestEp* self = (TestEp*)this_ptr;
  size_t num_nodes = 0, fused = 0;
#ifdef NXRT_TEST_EP_FAIL_CAPABILITY
  if (graph) return fail("test_plugin: GetCapability failed on purpose (built with NXRT_TEST_EP_FAIL_CAPABILITY)");
#endif
#ifdef NXRT_TEST_EP_NOT_A_NODE
  const OrtNode* not_a_node = (const OrtNode*)graph;
  return g_ep_api->EpGraphSupportInfo_AddNodesToFuse(support, &not_a_node, 1, NULL);
#endif
#ifdef NXRT_TEST_EP_EMPTY_GROUP
  const OrtNode* none[1] = {NULL};
  return g_ep_api->EpGraphSupportInfo_AddNodesToFuse(support, none, 0, NULL);
#endif
#ifdef NXRT_TEST_EP_API_MISUSE
  return misuse_api(graph);
#endif
  RETURN_IF_ERROR(g_api->Graph_GetNumNodes(graph, &num_nodes));
  if (num_nodes == 0) return NULL;
  const OrtNode** nodes = malloc(sizeof(OrtNode*) * num_nodes);
  const OrtNode** group = malloc(sizeof(OrtNode*) * num_nodes);
  OrtStatus* status = g_api->Graph_GetNodes(graph, nodes, num_nodes);
  OrtNodeFusionOptions options = {NXRT_ORT_API_VERSION, true};
  for (size_t i = 0; i < num_nodes && !status; ++i) {
    const int kind = supports(nodes[i]);
    if (kind == 1) group[fused++] = nodes[i];
    else if (kind == 2) status = claim_alone(support, nodes[i]);
    else if (kind == 3 && is_own_context(nodes[i]))
      status = g_ep_api->EpGraphSupportInfo_AddNodesToFuse(support, &nodes[i], 1, &options);
    else {
      const char* name = NULL;
      char message[256];
      g_api->Node_GetName(nodes[i], &name);
      snprintf(message, sizeof message, "test_plugin: '%s' (%s) is not one of Add, Mul, Relu, Neg on float tensors", name,
               node_op(nodes[i]));
      g_api->Logger_LogMessage(self->logger, ORT_LOGGING_LEVEL_WARNING, message, __FILE__, __LINE__, __func__);
    }
  }
  if (!status && fused) status = g_ep_api->EpGraphSupportInfo_AddNodesToFuse(support, group, fused, &options);
#ifdef NXRT_TEST_EP_DUPLICATE_CLAIM
  if (!status && fused) status = g_ep_api->EpGraphSupportInfo_AddNodesToFuse(support, &group[fused - 1], 1, &options);
#endif
  free(nodes);
  free(group);
  return status;
}

static OrtStatus* value_name(const OrtValueInfo* info, char* out, size_t size) {
  const char* name = NULL;
  RETURN_IF_ERROR(g_api->GetValueInfoName(info, &name));
  snprintf(out, size, "%s", name);
  return NULL;
}

/* Copies a constant initializer into the program (the EP keeps its own constants). */
static OrtStatus* add_constant(Program* p, const OrtValueInfo* info) {
  const OrtValue* value = NULL;
  OrtTensorTypeAndShapeInfo* shape = NULL;
  const void* data = NULL;
  size_t count = 0;
  Tensor* t = &p->constants[p->num_constants];
  RETURN_IF_ERROR(value_name(info, t->name, sizeof t->name));
  for (size_t c = 0; c < p->num_constants; ++c)
    if (strcmp(p->constants[c].name, t->name) == 0) return NULL;
  RETURN_IF_ERROR(g_api->ValueInfo_GetInitializerValue(info, &value));
  RETURN_IF_ERROR(g_api->GetTensorTypeAndShape(value, &shape));
  g_api->GetDimensionsCount(shape, &t->rank);
  g_api->GetDimensions(shape, t->dims, t->rank);
  g_api->GetTensorShapeElementCount(shape, &count);
  g_api->ReleaseTensorTypeAndShapeInfo(shape);
  RETURN_IF_ERROR(g_api->GetTensorData(value, &data));
  t->count = (int64_t)count;
  t->data = malloc(sizeof(float) * (count ? count : 1));
  memcpy(t->data, data, sizeof(float) * count);
  ++p->num_constants;
  return NULL;
}

static OrtStatus* read_string_attr(const OrtNode* node, const char* name, char** out) {
  const OrtOpAttr* attr = NULL;
  size_t size = 0;
  char probe = 0;
  RETURN_IF_ERROR(g_api->Node_GetAttributeByName(node, name, &attr));
  OrtStatus* s = g_api->ReadOpAttr(attr, ORT_OP_ATTR_STRING, &probe, 0, &size);
  if (s) g_api->ReleaseStatus(s);
  *out = calloc(size + 1, 1);
  s = g_api->ReadOpAttr(attr, ORT_OP_ATTR_STRING, *out, size, &size);
  if (s) free(*out);
  return s;
}

/* The program an EPContext node holds: inline (embed_mode=1), or, with embed_mode=0, in the file
 * that ep_cache_context names relative to the model, which the EP reads itself (as in ORT). */
static OrtStatus* read_context_payload(const OrtGraph* graph, const OrtNode* node, char** out) {
  const OrtOpAttr* attr = NULL;
  int64_t embed_mode = 1;
  size_t size = 0;
  RETURN_IF_ERROR(read_string_attr(node, "ep_cache_context", out));
  if (!g_api->Node_GetAttributeByName(node, "embed_mode", &attr) && attr)
    RETURN_IF_ERROR(g_api->ReadOpAttr(attr, ORT_OP_ATTR_INT, &embed_mode, sizeof embed_mode, &size));
  if (embed_mode == 1) return NULL;
  const char* model_path = NULL;
  char path[4096];
  RETURN_IF_ERROR(g_api->Graph_GetModelPath(graph, &model_path));
  const char* slash = model_path ? strrchr(model_path, '/') : NULL;
  snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - model_path + 1) : 0, model_path ? model_path : "", *out);
  free(*out);
  *out = NULL;
  FILE* f = fopen(path, "rb");
  if (!f) return fail("test_plugin: cannot open the EPContext side file next to the model");
  fseek(f, 0, SEEK_END);
  const long length = ftell(f);
  fseek(f, 0, SEEK_SET);
  const size_t wanted = length > 0 ? (size_t)length : 0;
  *out = calloc(wanted + 1, 1);
  const size_t got = fread(*out, 1, wanted, f);
  fclose(f);
  if (got != wanted) {
    free(*out);
    return fail("test_plugin: cannot read the EPContext side file next to the model");
  }
  return NULL;
}

static OrtStatus* build_program(Program* p, const OrtGraph* graph) {
  size_t num_nodes = 0;
  const OrtNode* nodes[MAX_STEPS];
  RETURN_IF_ERROR(g_api->Graph_GetNumNodes(graph, &num_nodes));
  if (num_nodes > MAX_STEPS) return fail("test_plugin: too many nodes in one group");
  RETURN_IF_ERROR(g_api->Graph_GetNodes(graph, nodes, num_nodes));
  for (size_t i = 0; i < num_nodes; ++i) {
    const char* op = node_op(nodes[i]);
    if (strcmp(op, "EPContext") == 0) {
      char* text = NULL;
      RETURN_IF_ERROR(read_context_payload(graph, nodes[i], &text));
      const int ok = deserialize(p, text);
      free(text);
      if (!ok) return fail("test_plugin: the EPContext payload is not a test_plugin program");
      continue;
    }
    Step* st = &p->steps[p->num_steps++];
    const OrtValueInfo* ins[2] = {NULL, NULL};
    const OrtValueInfo* outs[1] = {NULL};
    snprintf(st->op, sizeof st->op, "%s", op);
    RETURN_IF_ERROR(g_api->Node_GetNumInputs(nodes[i], &st->num_inputs));
    if (st->num_inputs > 2) return fail("test_plugin: too many inputs");
    RETURN_IF_ERROR(g_api->Node_GetInputs(nodes[i], ins, st->num_inputs));
    RETURN_IF_ERROR(g_api->Node_GetOutputs(nodes[i], outs, 1));
    RETURN_IF_ERROR(value_name(outs[0], st->output, sizeof st->output));
    for (size_t k = 0; k < st->num_inputs; ++k) {
      bool constant = false;
      RETURN_IF_ERROR(value_name(ins[k], st->inputs[k], sizeof st->inputs[k]));
      RETURN_IF_ERROR(g_api->ValueInfo_IsConstantInitializer(ins[k], &constant));
      if (constant) RETURN_IF_ERROR(add_constant(p, ins[k]));
    }
  }
  return NULL;
}

static OrtStatus* make_context_node(const Program* p, OrtNode** out) {
  char* payload = serialize(p);
  const int64_t one = 1;
  OrtOpAttr* attrs[4] = {NULL, NULL, NULL, NULL};
  const char* source = EP_NAME;
  OrtStatus* s = g_api->CreateOpAttr("ep_cache_context", payload, (int)strlen(payload), ORT_OP_ATTR_STRING, &attrs[0]);
  if (!s) s = g_api->CreateOpAttr("embed_mode", &one, 1, ORT_OP_ATTR_INT, &attrs[1]);
  if (!s) s = g_api->CreateOpAttr("main_context", &one, 1, ORT_OP_ATTR_INT, &attrs[2]);
  if (!s) s = g_api->CreateOpAttr("source", source, (int)strlen(source), ORT_OP_ATTR_STRING, &attrs[3]);
#ifdef NXRT_TEST_EP_CONTEXT_NO_PAYLOAD
  g_api->ReleaseOpAttr(attrs[0]);
  attrs[0] = attrs[3];
  attrs[3] = NULL;
#endif
  const char* inputs[MAX_VALUES];
  const char* outputs[MAX_VALUES];
  for (size_t i = 0; i < p->num_inputs; ++i) inputs[i] = p->inputs[i];
  for (size_t i = 0; i < p->num_outputs; ++i) outputs[i] = p->outputs[i];
  if (!s)
    s = g_editor->CreateNode("EPContext", "com.microsoft", p->name, inputs, p->num_inputs, outputs, p->num_outputs, attrs,
                             attrs[3] ? 4 : 3, out);
  for (int i = 0; i < 4; ++i)
    if (attrs[i]) g_api->ReleaseOpAttr(attrs[i]);
  free(payload);
  return s;
}

static OrtStatus* compile(OrtEp* this_ptr, const OrtGraph** graphs, const OrtNode** fused_nodes, size_t count,
                          OrtNodeComputeInfo** infos, OrtNode** context_nodes) {
  TestEp* self = (TestEp*)this_ptr;
#ifdef NXRT_TEST_EP_FAIL_COMPILE
  if (count > 0) return fail("test_plugin: Compile refused the graph (built with NXRT_TEST_EP_FAIL_COMPILE)");
#endif
  for (size_t g = 0; g < count; ++g) {
    Program* p = calloc(1, sizeof(Program));
    const OrtValueInfo* values[MAX_VALUES];
    const char* name = NULL;
    OrtStatus* s = NULL;
    p->info.ort_version_supported = NXRT_ORT_API_VERSION;
    p->info.CreateState = create_state;
    p->info.Compute = compute;
    p->info.ReleaseState = release_state;
    g_api->Node_GetName(fused_nodes[g], &name);
    snprintf(p->name, sizeof p->name, "%s", name);
    s = g_api->Node_GetNumInputs(fused_nodes[g], &p->num_inputs);
    if (!s) s = g_api->Node_GetInputs(fused_nodes[g], values, p->num_inputs);
    for (size_t i = 0; i < p->num_inputs && !s; ++i) s = value_name(values[i], p->inputs[i], sizeof p->inputs[i]);
    if (!s) s = g_api->Node_GetNumOutputs(fused_nodes[g], &p->num_outputs);
    if (!s) s = g_api->Node_GetOutputs(fused_nodes[g], values, p->num_outputs);
    for (size_t i = 0; i < p->num_outputs && !s; ++i) s = value_name(values[i], p->outputs[i], sizeof p->outputs[i]);
    if (!s) s = build_program(p, graphs[g]);
    if (!s && self->make_context) s = make_context_node(p, &context_nodes[g]);
#ifdef NXRT_TEST_EP_GRAPH_NODE_AS_CONTEXT
    if (!s && self->make_context) {
      g_api->ReleaseNode(context_nodes[g]);
      context_nodes[g] = (OrtNode*)fused_nodes[g];
    }
#endif
    if (s) {
      free_program(p);
      return s;
    }
#ifdef NXRT_TEST_EP_NULL_COMPUTE_INFO
    free_program(p);
    continue;
#endif
    infos[g] = &p->info;
  }
  return NULL;
}

/* ---- the Neg kernel (kernel registry, ORT API 24) ---- */

typedef struct NegKernel {
  OrtKernelImpl impl; /* first member: the host hands this pointer back */
  char node[128];
} NegKernel;

static OrtStatus* neg_compute(OrtKernelImpl* this_ptr, OrtKernelContext* context) {
  NegKernel* k = (NegKernel*)this_ptr;
  const OrtValue* in = NULL;
  OrtValue* out = NULL;
  OrtTensorTypeAndShapeInfo* info = NULL;
  int64_t dims[MAX_DIMS];
  size_t rank = 0, count = 0;
  const float* x = NULL;
  float* y = NULL;
#ifdef NXRT_TEST_EP_KERNEL_FAIL_COMPUTE
  char message[256];
  snprintf(message, sizeof message, "test_plugin: the Neg kernel of '%s' failed on purpose (built with "
           "NXRT_TEST_EP_KERNEL_FAIL_COMPUTE)", k->node);
  return fail(message);
#endif
  (void)k;
  RETURN_IF_ERROR(g_api->KernelContext_GetInput(context, 0, &in));
  RETURN_IF_ERROR(g_api->GetTensorTypeAndShape(in, &info));
  OrtStatus* s = g_api->GetDimensionsCount(info, &rank);
  if (!s && rank > MAX_DIMS) s = fail("test_plugin: Neg input of rank above 8");
  if (!s) s = g_api->GetDimensions(info, dims, rank);
  if (!s) s = g_api->GetTensorShapeElementCount(info, &count);
  g_api->ReleaseTensorTypeAndShapeInfo(info);
  if (!s) s = g_api->GetTensorData(in, (const void**)&x);
  if (!s) s = g_api->KernelContext_GetOutput(context, 0, dims, rank, &out);
  if (!s) s = g_api->GetTensorMutableData(out, (void**)&y);
  for (size_t i = 0; !s && i < count; ++i) y[i] = -x[i];
  return s;
}

static void neg_release(OrtKernelImpl* this_ptr) { free(this_ptr); }

/* Reads what a kernel needs of its node through OrtKernelInfo, and refuses a node it cannot run. */
static OrtStatus* create_neg_kernel(void* state, const OrtKernelInfo* info, OrtKernelImpl** out) {
  const OrtEp* ep = NULL;
  size_t inputs = 0, outputs = 0, size = 0;
  int since = 0;
  OrtTypeInfo* type = NULL;
  const OrtTensorTypeAndShapeInfo* tensor = NULL;
  ONNXTensorElementDataType elem = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  char op[16] = {0};
  *out = NULL;
  RETURN_IF_ERROR(g_ep_api->KernelInfo_GetEp(info, &ep));
  if (ep != (const OrtEp*)state) return fail("test_plugin: KernelInfo_GetEp names another EP than the one that registered the kernel");
  RETURN_IF_ERROR(g_api->KernelInfo_GetInputCount(info, &inputs));
  RETURN_IF_ERROR(g_api->KernelInfo_GetOutputCount(info, &outputs));
  if (inputs != 1 || outputs != 1) return fail("test_plugin: a Neg node has one input and one output");
  size = sizeof op;
  RETURN_IF_ERROR(g_api->KernelInfo_GetOperatorType(info, op, &size));
  RETURN_IF_ERROR(g_api->KernelInfo_GetOperatorSinceVersion(info, &since));
  if (strcmp(op, "Neg") != 0 || since != 13) return fail("test_plugin: the Neg kernel was given another operator than Neg-13");
  RETURN_IF_ERROR(g_api->KernelInfo_GetInputTypeInfo(info, 0, &type));
  OrtStatus* s = g_api->CastTypeInfoToTensorInfo(type, &tensor);
  if (!s) s = g_api->GetTensorElementType(tensor, &elem);
  g_api->ReleaseTypeInfo(type);
  if (s) return s;
  if (elem != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) return fail("test_plugin: the Neg kernel takes float tensors only");
  NegKernel* k = calloc(1, sizeof(NegKernel));
  size = sizeof k->node;
  s = g_api->KernelInfo_GetNodeName(info, k->node, &size);
  if (s) {
    free(k);
    return s;
  }
  k->impl.ort_version_supported = NXRT_ORT_API_VERSION;
  k->impl.Compute = neg_compute;
  k->impl.Release = neg_release;
  *out = &k->impl;
  return NULL;
}

/* The registry: one kernel, ai.onnx::Neg-13 on float tensors. */
static OrtStatus* build_kernel_registry(TestEp* ep) {
  OrtKernelDefBuilder* builder = NULL;
  OrtKernelDef* def = NULL;
  const OrtDataType* float_type = NULL;
#ifdef NXRT_TEST_EP_KERNEL_WRONG_VERSION
  const int first = 6, last = 12;
#else
  const int first = 13, last = 13;
#endif
  RETURN_IF_ERROR(g_ep_api->CreateKernelRegistry(&ep->kernels));
  RETURN_IF_ERROR(g_ep_api->GetTensorDataType(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &float_type));
  RETURN_IF_ERROR(g_ep_api->CreateKernelDefBuilder(&builder));
  OrtStatus* s = g_ep_api->KernelDefBuilder_SetOperatorType(builder, "Neg");
  if (!s) s = g_ep_api->KernelDefBuilder_SetDomain(builder, "");
  if (!s) s = g_ep_api->KernelDefBuilder_SetSinceVersion(builder, first, last);
  if (!s) s = g_ep_api->KernelDefBuilder_SetExecutionProvider(builder, EP_NAME);
  if (!s) s = g_ep_api->KernelDefBuilder_AddTypeConstraint(builder, "T", &float_type, 1);
  if (!s) s = g_ep_api->KernelDefBuilder_Build(builder, &def);
  if (!s) s = g_ep_api->KernelRegistry_AddKernel(ep->kernels, def, create_neg_kernel, ep);
  g_ep_api->ReleaseKernelDef(def);
  g_ep_api->ReleaseKernelDefBuilder(builder);
  return s;
}

static OrtStatus* get_kernel_registry(OrtEp* this_ptr, const OrtKernelRegistry** registry) {
  *registry = ((TestEp*)this_ptr)->kernels;
  return NULL;
}

/* What its EPContext blobs depend on; ORT passes the graph being compiled, and so must nxrt. */
static const char* compatibility_info(OrtEp* this_ptr, const OrtGraph* graph) {
  static char text[256];
  const char* name = NULL;
  OrtStatus* s = g_api->Graph_GetName(graph, &name);
  (void)this_ptr;
  snprintf(text, sizeof text, "test_plugin 0.3.1 graph=%s", s ? "?" : name);
  g_api->ReleaseStatus(s);
  return text;
}

static void release_infos(OrtEp* this_ptr, OrtNodeComputeInfo** infos, size_t count) {
  (void)this_ptr;
  for (size_t i = 0; i < count; ++i) free_program((Program*)infos[i]);
}

/* ---- the factory ---- */

typedef struct TestFactory {
  OrtEpFactory factory;
} TestFactory;

static const char* factory_name(const OrtEpFactory* f) {
  (void)f;
#ifdef NXRT_TEST_EP_NULL_NAME
  return NULL;
#else
  return EP_NAME;
#endif
}

static const char* factory_vendor(const OrtEpFactory* f) {
  (void)f;
  return "nxrt tests";
}

static const char* factory_version(const OrtEpFactory* f) {
  (void)f;
  return "0.3.1";
}

static uint32_t factory_vendor_id(const OrtEpFactory* f) {
  (void)f;
  return 0;
}

/* ONNX Runtime calls this of every factory that says API 23 or newer (NULL crashes it); a CPU EP
 * copies nothing between devices. */
static OrtStatus* create_data_transfer(OrtEpFactory* f, OrtDataTransferImpl** data_transfer) {
  (void)f;
  *data_transfer = NULL;
  return NULL;
}

static OrtStatus* supported_devices(OrtEpFactory* f, const OrtHardwareDevice* const* devices, size_t num_devices,
                                    OrtEpDevice** ep_devices, size_t max_ep_devices, size_t* num_ep_devices) {
  *num_ep_devices = 0;
#ifdef NXRT_TEST_EP_NO_DEVICES
  (void)f;
  (void)devices;
  (void)num_devices;
  (void)ep_devices;
  (void)max_ep_devices;
#elif defined(NXRT_TEST_EP_FOREIGN_DEVICE)
  (void)f;
  (void)max_ep_devices;
  if (num_devices > 0) {
    ep_devices[0] = (OrtEpDevice*)devices[0];
    *num_ep_devices = 1;
  }
#else
  for (size_t i = 0; i < num_devices && *num_ep_devices < max_ep_devices; ++i)
    if (g_api->HardwareDevice_Type(devices[i]) == OrtHardwareDeviceType_CPU)
      RETURN_IF_ERROR(g_ep_api->CreateEpDevice(f, devices[i], NULL, NULL, &ep_devices[(*num_ep_devices)++]));
#endif
  return NULL;
}

static OrtStatus* create_ep(OrtEpFactory* f, const OrtHardwareDevice* const* devices,
                            const OrtKeyValuePairs* const* metadata, size_t num_devices,
                            const OrtSessionOptions* options, const OrtLogger* logger, OrtEp** out) {
  (void)f;
  (void)devices;
  (void)metadata;
  (void)num_devices;
#ifdef NXRT_TEST_EP_FAIL_CREATE_EP
  if (out) return fail("test_plugin: CreateEp failed on purpose (built with NXRT_TEST_EP_FAIL_CREATE_EP)");
#endif
#ifdef NXRT_TEST_EP_NULL_EP
  (void)options;
  (void)logger;
  *out = NULL;
  return NULL;
#endif
  TestEp* ep = calloc(1, sizeof(TestEp));
  char value[8] = {0};
  size_t size = sizeof value;
  int has = 0;
  ep->ep.ort_version_supported = NXRT_ORT_API_VERSION;
  ep->ep.GetName = ep_name;
  ep->ep.GetCapability = get_capability;
  ep->ep.Compile = compile;
#ifdef NXRT_TEST_EP_NULL_COMPILE
  ep->ep.Compile = NULL;
#endif
  ep->ep.ReleaseNodeComputeInfos = release_infos;
  ep->ep.GetCompiledModelCompatibilityInfo = compatibility_info;
  ep->ep.GetKernelRegistry = get_kernel_registry;
#ifdef NXRT_TEST_EP_NO_KERNEL_REGISTRY
  ep->ep.GetKernelRegistry = NULL; /* the registry is built all the same, and never handed over */
#endif
  OrtStatus* registry_status = build_kernel_registry(ep);
  if (registry_status) {
    g_ep_api->ReleaseKernelRegistry(ep->kernels);
    free(ep);
    return registry_status;
  }
  ep->logger = logger;
  if (!g_api->HasSessionConfigEntry(options, NXRT_ORT_EP_CONTEXT_ENABLE_KEY, &has) && has &&
      !g_api->GetSessionConfigEntry(options, NXRT_ORT_EP_CONTEXT_ENABLE_KEY, value, &size))
    ep->make_context = strcmp(value, "1") == 0;
  *out = &ep->ep;
  return NULL;
}

static void release_ep(OrtEpFactory* f, OrtEp* ep) {
  (void)f;
  if (((TestEp*)ep)->kernels) g_ep_api->ReleaseKernelRegistry(((TestEp*)ep)->kernels);
  free(ep);
}

#ifdef NXRT_TEST_EP_TOO_NEW
#define REQUESTED_API 25
#else
#define REQUESTED_API NXRT_ORT_API_VERSION
#endif

EXPORT OrtStatus* CreateEpFactories(const char* registration_name, const OrtApiBase* base, const OrtLogger* logger,
                                    OrtEpFactory** factories, size_t max_factories, size_t* num_factories) {
  (void)registration_name;
  (void)logger;
  *num_factories = 0;
  g_api = base->GetApi(REQUESTED_API);
  if (!g_api) return NULL; /* nothing to build a status with; the host names the version */
  g_ep_api = g_api->GetEpApi();
  g_editor = g_api->GetModelEditorApi();
  if (max_factories < 1) return g_api->CreateStatus(ORT_INVALID_ARGUMENT, "test_plugin: no room for a factory");
#ifdef NXRT_TEST_EP_NO_FACTORIES
  return NULL;
#endif
  TestFactory* f = calloc(1, sizeof(TestFactory));
  f->factory.ort_version_supported = NXRT_ORT_API_VERSION;
  f->factory.GetName = factory_name;
  f->factory.GetVendor = factory_vendor;
  f->factory.GetSupportedDevices = supported_devices;
  f->factory.CreateEp = create_ep;
  f->factory.ReleaseEp = release_ep;
  f->factory.GetVendorId = factory_vendor_id;
  f->factory.GetVersion = factory_version;
  f->factory.CreateDataTransfer = create_data_transfer;
#ifdef NXRT_TEST_EP_NULL_DATA_TRANSFER
  f->factory.CreateDataTransfer = NULL;
#endif
  factories[0] = &f->factory;
  *num_factories = 1;
  return NULL;
}

#ifndef NXRT_TEST_EP_MISSING_SYMBOL
EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  free(factory);
  return NULL;
}
#endif
