// The identity, as an XLA FFI handler that XLA:CPU cannot fuse through: the value it is
// given is computed into a buffer of its own, and that buffer is the result.
//
// Why: XLA:CPU fuses cheap elementwise producers (adds, multiplies) into every consumer,
// recomputing them there. For a sum that many later sums build on, such as the
// gradient flowing back through a Transformer's residual connections (each layer's
// gradient is the next layer's plus that layer's own terms), the work grows with the
// square of the depth: every layer's fusion re-adds all the terms above it. Behind this
// call each such sum is computed once. See fusion_barrier.py.
//
// The result aliases the operand (input_output_aliases), so normally nothing is
// copied; the copy below only runs when XLA gave the result a buffer of its own.

#include <cstring>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error FusionBarrier(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  if (x.untyped_data() != y->untyped_data()) {
    std::memcpy(y->untyped_data(), x.untyped_data(), x.size_bytes());
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(TfxFusionBarrier, FusionBarrier,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());
