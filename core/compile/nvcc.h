#pragma once

// CUDA C++ compiled by the toolkit's nvcc (a problem with "Tilescope": {"Compiler": "nvcc"}), for
// code NVRTC cannot compile: CUTLASS and other code with host-side templates and host headers.
// The request is the NVRTC path's, compiled the same way: the source with Kernel Tuner's prefix of
// defines (compile/kernelsource.h) written to a file of the source's name in a folder of its own,
// then `nvcc -cubin -arch=ARCH --ptxas-options=-v -I... OPTIONS`; one nvcc process per compile, on
// the compile pool's thread. Registers, spills and the stack come from ptxas' report, as for NVRTC;
// diagnostics name the source by its name and line ("gemm.cu(12): error: ..."). The kernel need
// not be extern "C" nor instantiated by the source: a line after it takes the kernel's address, as
// NVRTC's name expressions do, and the entry is found in ptxas' report by its demangled name.

#include "compile/compiler.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

/// The nvcc this process compiles with.
struct NvccSetup {
    bool ok = false;
    std::filesystem::path path; ///< the nvcc executable
    std::string release;        ///< "13.0"
    std::string identity;       ///< what of it decides a binary: the whole of `nvcc --version`
    /// Why no nvcc can be used: where it was looked for, and how to get one.
    std::string error;
};

/// Finds nvcc: the file $TILESCOPE_NVCC names (or nvcc in the toolkit folder it names, as
/// FOLDER/bin/nvcc or FOLDER/nvcc), else nvcc on PATH, in $CUDA_HOME/bin (or $CUDA_PATH,
/// $CUDA_ROOT), then in `cudaDirs`' bin folders; runs `nvcc --version`. Not cached.
NvccSetup findNvcc(const std::vector<std::filesystem::path>& cudaDirs);
/// findNvcc over the usual toolkit folders, once per process.
const NvccSetup& nvccSetup();

/// The nvcc arguments of `request`, less the input and output files: -cubin, the arch (unless the
/// request's options name one: the last of those wins, as with NVRTC), the ptxas report, the
/// include dirs, the request's options. Deterministic.
std::vector<std::string> nvccOptions(const CompileRequest& request);

/// Compiles `request` with nvcc (nvccSetup()). Never throws for anything the source, defines or
/// options cause: a CompileError with nvcc's first error, its whole output in the log. Without
/// nvcc: a CompileError saying so (RequestBuilder refuses such a problem before).
CompileResult compileNvcc(const CompileRequest& request);

/// `option` with each $NAME or ${NAME} replaced by the environment variable's value, so that a
/// problem can name a folder of the machine it runs on ("-I${CUTLASS_DIR}/include"); "$$" is a
/// '$'. An unset or empty variable is an error: `error` names it, and the result is "".
std::string expandEnvironment(const std::string& option, std::string* error);

/// For a problem compiled by nvcc: the first #include of `source` (the kernel file's text) that
/// names a header in a folder ("cutlass/gemm/device/gemm_universal_adapter.h") which neither the
/// kernel's folder (for a quoted name), `includeDirs` nor the toolkit's include folders beside
/// nvcc hold, as "LINE: the header NAME is in none of FOLDERS"; "" when every such header is
/// found. Headers without a folder (<cstdio>) are the host compiler's, left to nvcc.
std::string missingNvccHeader(const std::filesystem::path& kernel, std::string_view source,
                              const std::vector<std::filesystem::path>& includeDirs);

/// nvcc's PTX for `request` (-ptx for the arch's virtual arch), as generatePtx gives NVRTC's.
PtxResult generateNvccPtx(const CompileRequest& request);

} // namespace tilescope
