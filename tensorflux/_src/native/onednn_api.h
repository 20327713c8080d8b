// What tensorflux's oneDNN kernels share: the few functions of oneDNN's v3 C API they
// use (declared here from dnnl.h / dnnl_types.h, so no oneDNN headers are needed), the
// engine, a stream per thread, and owning wrappers. Included by onednn_conv.cc and
// onednn_matmul.cc, which native/onednn.py builds into one library.

#ifndef TENSORFLUX_NATIVE_ONEDNN_API_H_
#define TENSORFLUX_NATIVE_ONEDNN_API_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

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
int dnnl_matmul_primitive_desc_create(dnnl_handle* pd, dnnl_handle engine,
                                      dnnl_const_handle src, dnnl_const_handle weights,
                                      dnnl_const_handle bias, dnnl_const_handle dst,
                                      dnnl_const_handle attr);
int dnnl_memory_create(dnnl_handle* memory, dnnl_const_handle md, dnnl_handle engine,
                       void* handle);
int dnnl_memory_destroy(dnnl_handle memory);
int dnnl_stream_wait(dnnl_handle stream);
}

namespace tfx_onednn {

constexpr int kCpuEngine = 1, kInOrderStream = 1, kF32 = 3, kFormatAny = 1;
constexpr int kQueryImplInfo = 8;
constexpr int kArgSrc = 1, kArgDst = 17, kArgFrom = 1, kArgTo = 17, kArgWeights = 33;

inline dnnl_handle Engine() {
  static dnnl_handle engine = [] {
    dnnl_handle e = nullptr;
    return dnnl_engine_create(&e, kCpuEngine, 0) == 0 ? e : nullptr;
  }();
  return engine;
}

// One stream per calling thread: XLA may run two oneDNN calls at once.
inline dnnl_handle Stream() {
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

// A float32 memory descriptor over `dims` laid out with `strides` (in elements).
inline bool Strided(MemoryDesc* d, std::initializer_list<int64_t> dims,
                    std::initializer_list<int64_t> strides) {
  dnnl_dims_t dims_array = {}, strides_array = {};
  std::copy(dims.begin(), dims.end(), dims_array);
  std::copy(strides.begin(), strides.end(), strides_array);
  return dnnl_memory_desc_create_with_strides(&d->md, static_cast<int>(dims.size()),
                                              dims_array, kF32, strides_array) == 0;
}

// A memory object over a buffer someone else owns, destroyed with this.
struct Memory {
  dnnl_handle mem = nullptr;
  Memory(dnnl_const_handle md, void* data) { dnnl_memory_create(&mem, md, Engine(), data); }
  Memory(const Memory&) = delete;
  ~Memory() {
    if (mem) dnnl_memory_destroy(mem);
  }
};

inline bool Execute(dnnl_const_handle primitive, std::initializer_list<dnnl_exec_arg_t> args) {
  std::vector<dnnl_exec_arg_t> list(args);
  return dnnl_primitive_execute(primitive, Stream(), static_cast<int>(list.size()),
                                list.data()) == 0 &&
         dnnl_stream_wait(Stream()) == 0;
}

// The implementation oneDNN picked for a primitive descriptor ("brgconv:avx512_core").
inline std::string ImplName(dnnl_const_handle pd) {
  const char* impl = nullptr;
  return dnnl_primitive_desc_query(pd, kQueryImplInfo, 0, &impl) == 0 && impl ? impl : "";
}

// Copies `text` into the caller's `info` buffer of `size` bytes (for the plan queries).
inline void CopyInfo(const std::string& text, char* info, size_t size) {
  if (!size) return;
  std::strncpy(info, text.c_str(), size - 1);
  info[size - 1] = '\0';
}

}  // namespace tfx_onednn

#endif  // TENSORFLUX_NATIVE_ONEDNN_API_H_
