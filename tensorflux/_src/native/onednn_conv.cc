// 2-D convolutions (forward, backprop input, backprop filter) through oneDNN, as one
// XLA FFI handler that tensorflux's Conv2D lowerings call on XLA:CPU.
//
// Why: XLA:CPU runs convolutions through Eigen's spatial convolution, which on the
// project's 2-core AVX-512 machine is 1.3-5x slower per op than oneDNN's JIT kernels
// (the small CNN of benchmarks/train_step.py: its eight convolutions take 24.6 ms in
// Eigen and 16.3 ms through this file, each timed alone). The operands stay where XLA
// put them, in TF's layouts: the activations NHWC (or NCHW) and the filter HWIO. Only
// the filter is reordered, into the blocked layout the kernel wants (a few hundred KB
// at most, in the calling thread's scratch buffer).
//
// Built on first use by tensorflux/_src/native/onednn.py against jaxlib's FFI headers
// and the libdnnl of the `onednn-cpu-gomp` wheel (oneDNN v3 C API; the few functions
// used are declared below, so no oneDNN headers are needed).

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <omp.h>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// -- oneDNN v3 C API (dnnl.h, dnnl_types.h) ------------------------------------------------
extern "C" {
typedef void* dnnl_handle;
typedef const void* dnnl_const_handle;
typedef int64_t dnnl_dims_t[12];
typedef struct {
  int arg;
  dnnl_handle memory;
} dnnl_exec_arg_t;
int dnnl_engine_create(dnnl_handle* engine, int kind, size_t index);
int dnnl_stream_create(dnnl_handle* stream, dnnl_handle engine, unsigned flags);
int dnnl_memory_desc_create_with_strides(dnnl_handle* md, int ndims, const dnnl_dims_t dims,
                                         int data_type, const dnnl_dims_t strides);
int dnnl_memory_desc_create_with_tag(dnnl_handle* md, int ndims, const dnnl_dims_t dims,
                                     int data_type, int tag);
int dnnl_memory_desc_destroy(dnnl_handle md);
size_t dnnl_memory_desc_get_size(dnnl_const_handle md);
int dnnl_memory_desc_equal(dnnl_const_handle lhs, dnnl_const_handle rhs);
int dnnl_convolution_forward_primitive_desc_create(
    dnnl_handle* pd, dnnl_handle engine, int prop_kind, int alg_kind, dnnl_const_handle src,
    dnnl_const_handle weights, dnnl_const_handle bias, dnnl_const_handle dst,
    const dnnl_dims_t strides, const dnnl_dims_t dilates, const dnnl_dims_t padding_l,
    const dnnl_dims_t padding_r, dnnl_const_handle attr);
int dnnl_convolution_backward_data_primitive_desc_create(
    dnnl_handle* pd, dnnl_handle engine, int alg_kind, dnnl_const_handle diff_src,
    dnnl_const_handle weights, dnnl_const_handle diff_dst, const dnnl_dims_t strides,
    const dnnl_dims_t dilates, const dnnl_dims_t padding_l, const dnnl_dims_t padding_r,
    dnnl_const_handle hint_fwd_pd, dnnl_const_handle attr);
int dnnl_convolution_backward_weights_primitive_desc_create(
    dnnl_handle* pd, dnnl_handle engine, int alg_kind, dnnl_const_handle src,
    dnnl_const_handle diff_weights, dnnl_const_handle diff_bias, dnnl_const_handle diff_dst,
    const dnnl_dims_t strides, const dnnl_dims_t dilates, const dnnl_dims_t padding_l,
    const dnnl_dims_t padding_r, dnnl_const_handle hint_fwd_pd, dnnl_const_handle attr);
int dnnl_reorder_primitive_desc_create(dnnl_handle* pd, dnnl_const_handle src_md,
                                       dnnl_handle src_engine, dnnl_const_handle dst_md,
                                       dnnl_handle dst_engine, dnnl_const_handle attr);
dnnl_const_handle dnnl_primitive_desc_query_md(dnnl_const_handle pd, int what, int index);
int dnnl_primitive_desc_query(dnnl_const_handle pd, int what, int index, void* result);
int dnnl_primitive_desc_destroy(dnnl_handle pd);
int dnnl_primitive_create(dnnl_handle* primitive, dnnl_const_handle pd);
int dnnl_primitive_destroy(dnnl_handle primitive);
int dnnl_primitive_execute(dnnl_const_handle primitive, dnnl_handle stream, int nargs,
                           const dnnl_exec_arg_t* args);
int dnnl_memory_create(dnnl_handle* memory, dnnl_const_handle md, dnnl_handle engine,
                       void* handle);
int dnnl_memory_destroy(dnnl_handle memory);
int dnnl_stream_wait(dnnl_handle stream);
int dnnl_primitive_attr_create(dnnl_handle* attr);
int dnnl_primitive_attr_set_scratchpad_mode(dnnl_handle attr, int mode);
}

namespace {

constexpr int kCpuEngine = 1, kInOrderStream = 1, kF32 = 3, kFormatAny = 1;
constexpr int kForwardTraining = 64, kConvolutionDirect = 1;
constexpr int kQueryImplInfo = 8, kQueryWeightsMd = 131, kQueryDiffWeightsMd = 132;
constexpr int kQueryScratchpadMd = 136, kScratchpadModeUser = 1;
constexpr int kArgSrc = 1, kArgDst = 17, kArgFrom = 1, kArgTo = 17, kArgWeights = 33;
constexpr int kArgDiffSrc = 129, kArgDiffDst = 145, kArgDiffWeights = 161, kArgScratchpad = 80;

enum Kind : int64_t { kForward = 0, kBackpropInput = 1, kBackpropFilter = 2 };

// What one convolution is: the plan cache's key, and what a plan is built from.
struct ConvSpec {
  int64_t kind, nchw;
  std::vector<int64_t> x, w, y;  // x, y as N,H,W,C (whatever the layout); w as kh,kw,i,o
  std::vector<int64_t> strides, dilations, pad_l, pad_r;
  int threads = 0;  // the kernel's thread count; 0: OpenMP's default (every core)
  bool operator<(const ConvSpec& o) const {
    return std::tie(kind, nchw, x, w, y, strides, dilations, pad_l, pad_r, threads) <
           std::tie(o.kind, o.nchw, o.x, o.w, o.y, o.strides, o.dilations, o.pad_l, o.pad_r,
                    o.threads);
  }
};

dnnl_handle Engine() {
  static dnnl_handle engine = [] {
    dnnl_handle e = nullptr;
    return dnnl_engine_create(&e, kCpuEngine, 0) == 0 ? e : nullptr;
  }();
  return engine;
}

// Primitives take their scratch memory from the caller (below), never from oneDNN's
// own scratchpad. Why: that one (the default build's) is shared by all primitives and
// requires each primitive to run on the thread that created it, but XLA calls from any
// of its threads and runs two convolutions at once (a layer's dx and dw). With six
// threads calling at once it gave wrong filter gradients, or hung. With the caller's
// memory oneDNN's primitives are thread-safe.
dnnl_handle UserScratchpad() {
  static dnnl_handle attr = [] {
    dnnl_handle a = nullptr;
    if (dnnl_primitive_attr_create(&a) != 0) return static_cast<dnnl_handle>(nullptr);
    return dnnl_primitive_attr_set_scratchpad_mode(a, kScratchpadModeUser) == 0
               ? a
               : static_cast<dnnl_handle>(nullptr);
  }();
  return attr;
}

// One stream per calling thread: XLA may run two convolutions at once.
dnnl_handle Stream() {
  thread_local dnnl_handle stream = [] {
    dnnl_handle s = nullptr;
    return dnnl_stream_create(&s, Engine(), kInOrderStream) == 0 ? s : nullptr;
  }();
  return stream;
}

struct MemoryDesc {
  dnnl_handle md = nullptr;
  MemoryDesc() = default;
  MemoryDesc(const MemoryDesc&) = delete;
  ~MemoryDesc() {
    if (md) dnnl_memory_desc_destroy(md);
  }
};

// Activations: logical dims N,C,H,W; strides of NHWC or NCHW memory.
bool ActivationDesc(MemoryDesc* d, const std::vector<int64_t>& nhwc, bool nchw) {
  int64_t n = nhwc[0], h = nhwc[1], w = nhwc[2], c = nhwc[3];
  dnnl_dims_t dims = {n, c, h, w};
  dnnl_dims_t strides_nhwc = {h * w * c, 1, w * c, c};
  dnnl_dims_t strides_nchw = {c * h * w, h * w, w, 1};
  return dnnl_memory_desc_create_with_strides(&d->md, 4, dims, kF32,
                                              nchw ? strides_nchw : strides_nhwc) == 0;
}

// TF's filter [kh, kw, in, out]: logical dims O,I,KH,KW.
bool FilterDesc(MemoryDesc* d, const std::vector<int64_t>& hwio, bool any) {
  int64_t kh = hwio[0], kw = hwio[1], i = hwio[2], o = hwio[3];
  dnnl_dims_t dims = {o, i, kh, kw};
  if (any) return dnnl_memory_desc_create_with_tag(&d->md, 4, dims, kF32, kFormatAny) == 0;
  dnnl_dims_t strides = {1, o, kw * i * o, i * o};
  return dnnl_memory_desc_create_with_strides(&d->md, 4, dims, kF32, strides) == 0;
}

// A compiled convolution: its primitive, and the reorder between TF's filter layout and
// the kernel's (none when they agree).
struct Plan {
  int64_t kind = 0;
  dnnl_handle pd = nullptr, primitive = nullptr;
  dnnl_handle reorder_pd = nullptr, reorder = nullptr;
  MemoryDesc x, y, w_user;
  dnnl_const_handle w_kernel = nullptr;  // owned by pd
  dnnl_const_handle scratch = nullptr, reorder_scratch = nullptr;  // owned by the pds
  size_t w_kernel_bytes = 0, scratch_bytes = 0, reorder_scratch_bytes = 0;
  std::string impl, error;
  ~Plan() {
    if (reorder) dnnl_primitive_destroy(reorder);
    if (reorder_pd) dnnl_primitive_desc_destroy(reorder_pd);
    if (primitive) dnnl_primitive_destroy(primitive);
    if (pd) dnnl_primitive_desc_destroy(pd);
  }
};

std::unique_ptr<Plan> BuildPlan(const ConvSpec& s) {
  auto plan = std::make_unique<Plan>();
  plan->kind = s.kind;
  auto fail = [&](const char* what) {
    plan->error = what;
    return std::move(plan);
  };
  if (!Engine()) return fail("oneDNN could not create its CPU engine");
  dnnl_handle attr = UserScratchpad();
  if (!attr) return fail("oneDNN could not create primitive attributes");
  MemoryDesc w_any;
  if (!ActivationDesc(&plan->x, s.x, s.nchw) || !ActivationDesc(&plan->y, s.y, s.nchw) ||
      !FilterDesc(&plan->w_user, s.w, false) || !FilterDesc(&w_any, s.w, true))
    return fail("oneDNN rejected a memory descriptor");
  dnnl_dims_t strides = {}, dilates = {}, pad_l = {}, pad_r = {};
  for (int i = 0; i < 2; ++i) {
    strides[i] = s.strides[i];
    dilates[i] = s.dilations[i] - 1;  // oneDNN counts the gaps: 0 is no dilation
    pad_l[i] = s.pad_l[i];
    pad_r[i] = s.pad_r[i];
  }
  dnnl_handle fwd = nullptr;
  if (dnnl_convolution_forward_primitive_desc_create(
          &fwd, Engine(), kForwardTraining, kConvolutionDirect, plan->x.md, w_any.md, nullptr,
          plan->y.md, strides, dilates, pad_l, pad_r, attr) != 0)
    return fail("oneDNN has no forward convolution for these shapes");
  if (s.kind == kForward) {
    plan->pd = fwd;
  } else {
    int status =
        s.kind == kBackpropInput
            ? dnnl_convolution_backward_data_primitive_desc_create(
                  &plan->pd, Engine(), kConvolutionDirect, plan->x.md, w_any.md, plan->y.md,
                  strides, dilates, pad_l, pad_r, fwd, attr)
            : dnnl_convolution_backward_weights_primitive_desc_create(
                  &plan->pd, Engine(), kConvolutionDirect, plan->x.md, w_any.md, nullptr,
                  plan->y.md, strides, dilates, pad_l, pad_r, fwd, attr);
    dnnl_primitive_desc_destroy(fwd);
    if (status != 0) return fail("oneDNN has no backward convolution for these shapes");
  }
  const char* impl = nullptr;
  if (dnnl_primitive_desc_query(plan->pd, kQueryImplInfo, 0, &impl) == 0 && impl)
    plan->impl = impl;
  plan->w_kernel = dnnl_primitive_desc_query_md(
      plan->pd, s.kind == kBackpropFilter ? kQueryDiffWeightsMd : kQueryWeightsMd, 0);
  plan->w_kernel_bytes = dnnl_memory_desc_get_size(plan->w_kernel);
  if (!dnnl_memory_desc_equal(plan->w_kernel, plan->w_user.md)) {
    bool to_kernel = s.kind != kBackpropFilter;
    dnnl_const_handle from = to_kernel ? plan->w_user.md : plan->w_kernel;
    dnnl_const_handle to = to_kernel ? plan->w_kernel : plan->w_user.md;
    if (dnnl_reorder_primitive_desc_create(&plan->reorder_pd, from, Engine(), to, Engine(),
                                           attr) != 0 ||
        dnnl_primitive_create(&plan->reorder, plan->reorder_pd) != 0)
      return fail("oneDNN cannot reorder the filter");
    plan->reorder_scratch = dnnl_primitive_desc_query_md(plan->reorder_pd, kQueryScratchpadMd, 0);
    plan->reorder_scratch_bytes = dnnl_memory_desc_get_size(plan->reorder_scratch);
  }
  plan->scratch = dnnl_primitive_desc_query_md(plan->pd, kQueryScratchpadMd, 0);
  plan->scratch_bytes = dnnl_memory_desc_get_size(plan->scratch);
  if (dnnl_primitive_create(&plan->primitive, plan->pd) != 0)
    return fail("oneDNN could not create the convolution");
  return plan;
}

std::mutex plans_mutex;
std::map<ConvSpec, std::unique_ptr<Plan>>& Plans() {
  static auto* plans = new std::map<ConvSpec, std::unique_ptr<Plan>>();
  return *plans;
}

// Plans are built once per spec and never freed: executables reuse them every step.
const Plan* GetPlan(const ConvSpec& spec) {
  std::lock_guard<std::mutex> lock(plans_mutex);
  auto& slot = Plans()[spec];
  if (!slot) {
    // oneDNN splits a kernel's work for the thread count it sees when the primitive is
    // created, and runs it with that many: set it (this thread's OpenMP setting) for now.
    int all = omp_get_max_threads();
    if (spec.threads > 0) omp_set_num_threads(spec.threads);
    slot = BuildPlan(spec);
    omp_set_num_threads(all);
  }
  return slot.get();
}

// A memory object over a buffer someone else owns, destroyed with this; none for an
// empty descriptor (a primitive that needs no scratchpad).
struct Memory {
  dnnl_handle mem = nullptr;
  Memory(dnnl_const_handle md, void* data) {
    if (md && dnnl_memory_desc_get_size(md) > 0) dnnl_memory_create(&mem, md, Engine(), data);
  }
  ~Memory() {
    if (mem) dnnl_memory_destroy(mem);
  }
};

// Runs `primitive` on `args`, plus its scratchpad when it has one.
bool Execute(dnnl_const_handle primitive, std::initializer_list<dnnl_exec_arg_t> args,
             const Memory& scratchpad) {
  std::vector<dnnl_exec_arg_t> list(args);
  if (scratchpad.mem) list.push_back({kArgScratchpad, scratchpad.mem});
  return dnnl_primitive_execute(primitive, Stream(), static_cast<int>(list.size()),
                                list.data()) == 0 &&
         dnnl_stream_wait(Stream()) == 0;
}

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

constexpr size_t Aligned(size_t bytes) { return (bytes + 63) / 64 * 64; }

// The calling thread's scratch memory (the reordered filter and the primitives'
// scratchpads), kept and grown to its largest call: XLA's threads are few and call
// every step, and a fresh allocation per call would fault its pages in each time.
char* ThreadScratch(size_t bytes) {
  thread_local std::unique_ptr<void, AlignedFree> buffer;
  thread_local size_t capacity = 0;
  if (bytes > capacity) {
    buffer.reset(std::aligned_alloc(64, Aligned(bytes)));
    capacity = buffer ? Aligned(bytes) : 0;
  }
  return static_cast<char*>(buffer.get());
}

// Runs a plan: `a`, `b` and `out` are (x, w, y), (w, dy, dx) or (x, dy, dw) by kind.
ffi::Error Run(const Plan& plan, void* a, void* b, void* out) {
  if (!plan.error.empty()) return ffi::Error::Internal("tensorflux oneDNN conv: " + plan.error);
  // This thread's scratch memory: [reordered filter | scratchpad | reorder's scratchpad]
  size_t w_bytes = plan.reorder ? Aligned(plan.w_kernel_bytes) : 0;
  size_t scratch_bytes = Aligned(plan.scratch_bytes);
  size_t total = w_bytes + scratch_bytes + Aligned(plan.reorder_scratch_bytes);
  char* memory = ThreadScratch(total);
  if (!memory && total > 0) return ffi::Error::Internal("tensorflux oneDNN conv: out of memory");
  Memory scratchpad(plan.scratch, memory + w_bytes);
  Memory reorder_scratchpad(plan.reorder_scratch, memory + w_bytes + scratch_bytes);

  Memory x(plan.x.md, plan.kind == kBackpropInput ? out : a);
  Memory y(plan.y.md, plan.kind == kForward ? out : b);
  void* w_user = plan.kind == kForward ? b : plan.kind == kBackpropInput ? a : out;
  Memory w_tf(plan.w_user.md, w_user);
  Memory w(plan.w_kernel, plan.reorder ? memory : w_user);
  bool ok = true;
  if (plan.reorder && plan.kind != kBackpropFilter)
    ok = Execute(plan.reorder, {{kArgFrom, w_tf.mem}, {kArgTo, w.mem}}, reorder_scratchpad);
  if (ok) {
    switch (plan.kind) {
      case kForward:
        ok = Execute(plan.primitive, {{kArgSrc, x.mem}, {kArgWeights, w.mem}, {kArgDst, y.mem}},
                     scratchpad);
        break;
      case kBackpropInput:
        ok = Execute(plan.primitive,
                     {{kArgDiffDst, y.mem}, {kArgWeights, w.mem}, {kArgDiffSrc, x.mem}},
                     scratchpad);
        break;
      default:
        ok = Execute(plan.primitive,
                     {{kArgSrc, x.mem}, {kArgDiffDst, y.mem}, {kArgDiffWeights, w.mem}},
                     scratchpad);
        if (ok && plan.reorder)
          ok = Execute(plan.reorder, {{kArgFrom, w.mem}, {kArgTo, w_tf.mem}}, reorder_scratchpad);
    }
  }
  if (!ok) return ffi::Error::Internal("tensorflux oneDNN conv: execution failed");
  return ffi::Error::Success();
}

std::vector<int64_t> Vec(ffi::Span<const int64_t> s) { return {s.begin(), s.end()}; }

std::vector<int64_t> Nhwc(ffi::Span<const int64_t> dims, bool nchw) {
  std::vector<int64_t> v = Vec(dims);
  return nchw ? std::vector<int64_t>{v[0], v[2], v[3], v[1]} : v;
}

ffi::Error Conv(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::Result<ffi::AnyBuffer> out, int64_t kind,
                int64_t nchw, ffi::Span<const int64_t> strides,
                ffi::Span<const int64_t> dilations, ffi::Span<const int64_t> pad_l,
                ffi::Span<const int64_t> pad_r) {
  if (a.element_type() != ffi::DataType::F32 || b.element_type() != ffi::DataType::F32 ||
      a.dimensions().size() != 4 || b.dimensions().size() != 4 ||
      out->dimensions().size() != 4 || strides.size() != 2 || dilations.size() != 2 ||
      pad_l.size() != 2 || pad_r.size() != 2 || kind < kForward || kind > kBackpropFilter)
    return ffi::Error::InvalidArgument("tensorflux oneDNN conv: expects 4-D float32 operands");
  ConvSpec spec{kind, nchw, {}, {}, {}, Vec(strides), Vec(dilations), Vec(pad_l), Vec(pad_r)};
  switch (kind) {
    case kForward:
      spec.x = Nhwc(a.dimensions(), nchw), spec.w = Vec(b.dimensions());
      spec.y = Nhwc(out->dimensions(), nchw);
      break;
    case kBackpropInput:
      spec.w = Vec(a.dimensions()), spec.y = Nhwc(b.dimensions(), nchw);
      spec.x = Nhwc(out->dimensions(), nchw);
      break;
    default:
      spec.x = Nhwc(a.dimensions(), nchw), spec.y = Nhwc(b.dimensions(), nchw);
      spec.w = Vec(out->dimensions());
  }
  return Run(*GetPlan(spec), a.untyped_data(), b.untyped_data(), out->untyped_data());
}

// The first failure of two calls, or success.
ffi::Error FirstFailure(ffi::Error first, ffi::Error second) {
  return first.failure() ? std::move(first) : std::move(second);
}

// Side by side only with two threads, one each. A multi-threaded oneDNN kernel inside
// another parallel region (nested OpenMP) gave wrong filter gradients, NaNs, or hung
// (oneDNN 3.2 with GOMP, 3, 4 and 7 threads); with more threads the two run in turn.
constexpr int kPairThreads = 2;

// A layer's two gradients at once, dx (from w, dy) and dw (from x, dy), on one thread
// each. Why: they are independent, and the two kernels side by side, one core each,
// finish sooner than one after the other on both cores (the small CNN's 32->64 and
// 64->128 layers on the 2-core machine: 6.2 -> 5.5 ms and 5.1 -> 4.8 ms, timed
// alone). As one call, XLA cannot run them side by side on both threads each, which
// oversubscribes the cores.
ffi::Error ConvPair(ffi::AnyBuffer w, ffi::AnyBuffer dy, ffi::AnyBuffer x,
                    ffi::Result<ffi::AnyBuffer> dx, ffi::Result<ffi::AnyBuffer> dw, int64_t nchw,
                    ffi::Span<const int64_t> strides, ffi::Span<const int64_t> dilations,
                    ffi::Span<const int64_t> pad_l, ffi::Span<const int64_t> pad_r) {
  for (const ffi::AnyBuffer* b : {&w, &dy, &x})
    if (b->element_type() != ffi::DataType::F32 || b->dimensions().size() != 4)
      return ffi::Error::InvalidArgument(
          "tensorflux oneDNN conv pair: expects 4-D float32 operands");
  if (strides.size() != 2 || dilations.size() != 2 || pad_l.size() != 2 || pad_r.size() != 2)
    return ffi::Error::InvalidArgument("tensorflux oneDNN conv pair: expects 2-D windows");
  ConvSpec dx_spec{kBackpropInput, nchw, Nhwc(x.dimensions(), nchw), Vec(w.dimensions()),
                   Nhwc(dy.dimensions(), nchw), Vec(strides), Vec(dilations), Vec(pad_l),
                   Vec(pad_r)};
  ConvSpec dw_spec = dx_spec;
  dw_spec.kind = kBackpropFilter;
  auto run_dx = [&](const ConvSpec& spec) {
    return Run(*GetPlan(spec), w.untyped_data(), dy.untyped_data(), dx->untyped_data());
  };
  auto run_dw = [&](const ConvSpec& spec) {
    return Run(*GetPlan(spec), x.untyped_data(), dy.untyped_data(), dw->untyped_data());
  };
  if (omp_get_max_threads() != kPairThreads) return FirstFailure(run_dx(dx_spec), run_dw(dw_spec));
  dx_spec.threads = dw_spec.threads = 1;
  GetPlan(dx_spec), GetPlan(dw_spec);  // built before the threads split
  ffi::Error errors[2];
#pragma omp parallel num_threads(kPairThreads)
  {
    // A team of one (OpenMP may give fewer threads than asked) runs both in turn.
    int me = omp_get_thread_num(), team = omp_get_num_threads();
    if (me == 0) errors[0] = run_dx(dx_spec);
    if (me == 1 || team == 1) errors[1] = run_dw(dw_spec);
  }
  return FirstFailure(std::move(errors[0]), std::move(errors[1]));
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(TfxOnednnConv, Conv,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int64_t>("kind")
                                  .Attr<int64_t>("nchw")
                                  .Attr<ffi::Span<const int64_t>>("strides")
                                  .Attr<ffi::Span<const int64_t>>("dilations")
                                  .Attr<ffi::Span<const int64_t>>("pad_l")
                                  .Attr<ffi::Span<const int64_t>>("pad_r"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(TfxOnednnConvPair, ConvPair,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int64_t>("nchw")
                                  .Attr<ffi::Span<const int64_t>>("strides")
                                  .Attr<ffi::Span<const int64_t>>("dilations")
                                  .Attr<ffi::Span<const int64_t>>("pad_l")
                                  .Attr<ffi::Span<const int64_t>>("pad_r"));

// For the Python side, before it lowers a convolution here: the implementation oneDNN
// picks for a spec ("brgconv:avx512_core", ...), or the reason it has none. Returns 0
// when the spec has a plan. Dims as in ConvSpec.
extern "C" int tfx_onednn_conv_plan(int64_t kind, int64_t nchw, const int64_t* x,
                                    const int64_t* w, const int64_t* y, const int64_t* strides,
                                    const int64_t* dilations, const int64_t* pad_l,
                                    const int64_t* pad_r, char* info, size_t info_size) {
  ConvSpec spec{kind,
                nchw,
                {x, x + 4},
                {w, w + 4},
                {y, y + 4},
                {strides, strides + 2},
                {dilations, dilations + 2},
                {pad_l, pad_l + 2},
                {pad_r, pad_r + 2}};
  const Plan* plan = GetPlan(spec);
  const std::string& text = plan->error.empty() ? plan->impl : plan->error;
  if (info_size) {
    std::strncpy(info, text.c_str(), info_size - 1);
    info[info_size - 1] = '\0';
  }
  return plan->error.empty() ? 0 : 1;
}

// For the Python side: whether a layer's two gradients run side by side (ConvPair).
extern "C" int tfx_onednn_conv_pairs() { return omp_get_max_threads() == kPairThreads; }
