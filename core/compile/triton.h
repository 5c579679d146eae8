#pragma once

// Triton kernels compiled by Triton itself (a CompileRequest of language Triton): Tilescope's
// helper script (compile/python/tilescope_triton_compile.py) runs in persistent Python processes,
// one for each thread compiling at once, started when first needed and kept for the next
// compile; each speaks JSON lines. A config compiles as Triton's JIT compiles the call it stands
// for (triton.compile of the specialised signature for a GPUTarget of the request's arch, no GPU
// needed); registers, spills and stack come from ptxas' -v report, the launch (threads, dynamic
// shared memory, cluster, scratch buffers, the argument types) from Triton's metadata. Triton's
// own message is the result's when it refuses a config.

#include "compile/compiler.h"
#include "spec/launchplan.h"

#include <string>
#include <string_view>

namespace tilescope {

/// The Triton this process compiles with, found once: the Python (tilescopePython()) and the
/// helper started, its first line read.
struct TritonSetup {
    bool ok = false;
    std::string python;   ///< as started: "python3", or $TILESCOPE_PYTHON
    std::string version;  ///< Triton's: "3.6.0"
    std::string identity; ///< what of it decides a binary (its version, the environment its cache keys on)
    std::string nvdisasm; ///< the nvdisasm its wheel ships (triton/backends/nvidia/bin), "" without one
    /// Why Triton kernels cannot be compiled here (no Python, no triton module, no helper), with
    /// how to install it.
    std::string error;
};
const TritonSetup& tritonSetup();

/// Compiles a Triton request (see CompileRequest). Thread-safe: each call has a helper process
/// to itself. Never throws for anything the kernel or its values can cause: that is a
/// CompileError with Triton's message (and Triton's error text in the log).
CompileResult compileTriton(const CompileRequest& request);

/// Triton's name of an element type, as a pointer to it is typed: "fp16", "bf16", "fp32", "i32",
/// "u8", "i1" (bool), "fp8e4nv", "fp8e5".
std::string_view tritonTypeName(ElementType type);

} // namespace tilescope
