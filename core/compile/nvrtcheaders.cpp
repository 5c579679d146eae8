#include "compile/nvrtcheaders.h"

#include "base/cudatools.h"
#include "base/sha256.h"
#include "compile/compiler.h"

#include <nvrtc.h>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>
#include <utility>

namespace tilescope {

namespace fs = std::filesystem;

namespace {

std::string readText(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in)
        text << in.rdbuf();
    return text.str();
}

// "13.0" from the toolkit's cuda.h (#define CUDA_VERSION 13000), or "".
std::string toolkitVersion(const fs::path& include) {
    const std::string text = readText(include / "cuda.h");
    static constexpr std::string_view kDefine = "#define CUDA_VERSION ";
    const std::size_t at = text.find(kDefine);
    if (at == std::string::npos)
        return {};
    const int number = std::atoi(text.c_str() + at + kDefine.size());
    if (number <= 0)
        return {};
    return std::to_string(number / 1000) + "." + std::to_string(number % 1000 / 10);
}

// The toolkit NVRTC was loaded from: libnvrtc is in ROOT/lib, ROOT/lib64 or
// ROOT/targets/ARCH/lib, whose parent (ROOT, or ROOT/targets/ARCH) has the include folder.
fs::path nvrtcLibraryRoot() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) == 0 || !info.dli_fname || !*info.dli_fname)
        return {};
    const fs::path library(info.dli_fname);
    if (!library.is_absolute())
        return {};
    return library.parent_path().parent_path();
}

// C math functions NVRTC declares in the global namespace (as math.h has them), which <cmath>
// puts in std.
constexpr std::array kMathNames = {
    "acos",       "acosf",     "acosh",      "acoshf",  "asin",    "asinf",     "asinh",      "asinhf",   "atan",
    "atanf",      "atan2",     "atan2f",     "atanh",   "atanhf",  "cbrt",      "cbrtf",      "ceil",     "ceilf",
    "copysign",   "copysignf", "cos",        "cosf",    "cosh",    "coshf",     "erf",        "erff",     "erfc",
    "erfcf",      "exp",       "expf",       "exp2",    "exp2f",   "expm1",     "expm1f",     "fabs",     "fabsf",
    "fdim",       "fdimf",     "floor",      "floorf",  "fma",     "fmaf",      "fmax",       "fmaxf",    "fmin",
    "fminf",      "fmod",      "fmodf",      "frexp",   "frexpf",  "hypot",     "hypotf",     "ilogb",    "ilogbf",
    "ldexp",      "ldexpf",    "lgamma",     "lgammaf", "llrint",  "llrintf",   "llround",    "llroundf", "log",
    "logf",       "log10",     "log10f",     "log1p",   "log1pf",  "log2",      "log2f",      "logb",     "logbf",
    "lrint",      "lrintf",    "lround",     "lroundf", "modf",    "modff",     "nan",        "nanf",     "nearbyint",
    "nearbyintf", "nextafter", "nextafterf", "pow",     "powf",    "remainder", "remainderf", "remquo",   "remquof",
    "rint",       "rintf",     "round",      "roundf",  "scalbln", "scalblnf",  "scalbn",     "scalbnf",  "sin",
    "sinf",       "sinh",      "sinhf",      "sqrt",    "sqrtf",   "tan",       "tanf",       "tanh",     "tanhf",
    "tgamma",     "tgammaf",   "trunc",      "truncf",  "isnan",   "isinf",     "isfinite",   "signbit",  "abs",
    "labs",       "llabs",
};

// What glibc's math.h defines beyond the functions (nvcc's default dialect has the M_ constants).
// NVRTC has no __builtin_huge_valf or __builtin_nanf: the infinities and NaN are the bits, as
// CUDA's math_constants.h writes them (so not constant expressions).
constexpr std::string_view kMathMacros = R"(#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __int_as_float(0x7f800000)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000ULL)
#endif
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
)";

// float.h's macros (libcu++'s cfloat defines none for NVRTC), as glibc's are for x86-64.
constexpr std::string_view kFloatMacros = R"(#define FLT_RADIX 2
#define FLT_MANT_DIG 24
#define FLT_DIG 6
#define FLT_MIN_EXP (-125)
#define FLT_MIN_10_EXP (-37)
#define FLT_MAX_EXP 128
#define FLT_MAX_10_EXP 38
#define FLT_MIN 1.17549435082228750797e-38F
#define FLT_MAX 3.40282346638528859812e+38F
#define FLT_EPSILON 1.1920928955078125e-07F
#define FLT_TRUE_MIN 1.40129846432481707092e-45F
#define DBL_MANT_DIG 53
#define DBL_DIG 15
#define DBL_MIN_EXP (-1021)
#define DBL_MIN_10_EXP (-307)
#define DBL_MAX_EXP 1024
#define DBL_MAX_10_EXP 308
#define DBL_MIN 2.22507385850720138309e-308
#define DBL_MAX 1.79769313486231570815e+308
#define DBL_EPSILON 2.22044604925031308085e-16
#define DBL_TRUE_MIN 4.94065645841246544177e-324
#define DECIMAL_DIG 21
#define FLT_EVAL_METHOD 0
)";

// C++ headers whose names libcu++ has as cuda/std/NAME (C++17 and later): the shim includes that
// and lets std:: name what cuda::std has. Not <version>: libcu++ includes it where it exists,
// before cuda::std is declared.
constexpr std::array kLibcuxxHeaders = {
    "array",           "atomic",   "bit",    "bitset",    "chrono",      "complex", "concepts", "expected",
    "functional",      "iterator", "limits", "mdspan",    "memory",      "numbers", "numeric",  "optional",
    "ranges",          "ratio",    "span",   "tuple",     "type_traits", "utility", "variant",  "initializer_list",
    "source_location", "barrier",  "latch",  "semaphore",
};

constexpr std::string_view kIntegerNames[] = {
    "int8_t",        "int16_t",       "int32_t",       "int64_t",        "uint8_t",        "uint16_t",
    "uint32_t",      "uint64_t",      "int_fast8_t",   "int_fast16_t",   "int_fast32_t",   "int_fast64_t",
    "uint_fast8_t",  "uint_fast16_t", "uint_fast32_t", "uint_fast64_t",  "int_least8_t",   "int_least16_t",
    "int_least32_t", "int_least64_t", "uint_least8_t", "uint_least16_t", "uint_least32_t", "uint_least64_t",
    "intptr_t",      "uintptr_t",     "intmax_t",      "uintmax_t",
};

std::string usings(std::initializer_list<std::string_view> names) {
    std::string text = "namespace std {\n";
    for (std::string_view name : names)
        text += "using ::" + std::string(name) + ";\n";
    return text + "}\n";
}

// The header the toolkit has at `name` (in the first include folder that has it), or "".
fs::path toolkitHeader(const std::vector<std::string>& dirs, const std::string& name) {
    for (const std::string& dir : dirs) {
        std::error_code ec;
        if (fs::is_regular_file(fs::path(dir) / name, ec))
            return fs::path(dir) / name;
    }
    return {};
}

void addHeaders(NvrtcHeaders& h) {
    static constexpr std::string_view kTag = "// Tilescope's stand-in for a header NVRTC lacks.\n#pragma once\n";
    auto add = [&](std::string name, std::string body) {
        h.names.push_back(std::move(name));
        h.texts.push_back(std::string(kTag) + body);
    };
    // The C library: NVRTC declares printf, malloc, free, memcpy, memset, assert and the math
    // functions itself; the headers add the macros and types.
    add("stdio.h", "");
    add("cstdio", usings({"printf"}));
    add("stdlib.h", "");
    add("cstdlib", usings({"abs", "labs", "llabs", "malloc", "free"}));
    add("string.h", "");
    add("cstring", usings({"memcpy", "memset"}));
    add("assert.h", "");
    add("cassert", "");
    add("stdbool.h", "");
    add("float.h", std::string(kFloatMacros));
    add("cfloat", std::string(kFloatMacros));
    add("math.h", std::string(kMathMacros));
    std::string cmath = std::string(kMathMacros) + "namespace std {\n";
    for (const char* name : kMathNames)
        cmath += "using ::" + std::string(name) + ";\n";
    add("cmath", cmath + "}\n");
    // libcu++ has the rest, also for NVRTC (its cstdint declares ::int32_t and the others there).
    const bool libcuxx = !toolkitHeader(h.includeDirs, "cuda/std/cstdint").empty();
    if (libcuxx) {
        add("stdint.h", "#include <cuda/std/cstdint>\n");
        std::string cstdint = "#include <cuda/std/cstdint>\nnamespace std {\n";
        for (std::string_view name : kIntegerNames)
            cstdint += "using ::" + std::string(name) + ";\n";
        add("cstdint", cstdint + "}\n");
        add("limits.h", "#include <cuda/std/climits>\n");
        add("climits", "#include <cuda/std/climits>\n");
        add("stddef.h", "#include <cuda/std/cstddef>\n");
        add("cstddef", "#include <cuda/std/cstddef>\nnamespace std {\nusing namespace cuda::std;\n}\n");
        for (const char* name : kLibcuxxHeaders) {
            const std::string header = std::string("cuda/std/") + name;
            if (!toolkitHeader(h.includeDirs, header).empty())
                add(name, "#include <" + header + ">\nnamespace std {\nusing namespace cuda::std;\n}\n");
        }
    }
    // CUB's umbrella header includes its device-wide algorithms, host code that NVRTC refuses
    // ("a function explicitly marked as a __host__ function is not allowed in JIT mode"): the
    // toolkit's own, less those lines. Kernels use its block, warp and thread primitives.
    if (const fs::path cub = toolkitHeader(h.includeDirs, "cub/cub.cuh"); !cub.empty()) {
        std::istringstream lines(readText(cub));
        std::string kept = "// CUB's umbrella header less its device-wide algorithms and allocator (host code).\n";
        for (std::string line; std::getline(lines, line);) {
            if (line.find("#include <cub/device/") != std::string::npos ||
                line.find("#include <cub/util_allocator.cuh>") != std::string::npos)
                continue;
            kept += line + "\n";
        }
        h.names.emplace_back("cub/cub.cuh");
        h.texts.push_back(std::move(kept));
    }
}

} // namespace

NvrtcHeaders findNvrtcHeaders(const std::vector<fs::path>& roots, const std::string& nvrtcVersion) {
    NvrtcHeaders h;
    h.searched = roots;
    // The toolkit of NVRTC's own version first: its headers are the ones NVRTC is made for.
    fs::path any;
    for (const fs::path& root : roots) {
        std::error_code ec;
        if (root.empty() || !fs::is_regular_file(root / "include" / "cuda.h", ec))
            continue;
        if (any.empty())
            any = root;
        if (toolkitVersion(root / "include") == nvrtcVersion) {
            h.root = root;
            break;
        }
    }
    if (h.root.empty())
        h.root = any;
    if (!h.root.empty()) {
        const fs::path include = h.root / "include";
        std::error_code ec;
        if (fs::is_directory(include / "cccl", ec))
            h.includeDirs.push_back((include / "cccl").string());
        h.includeDirs.push_back(include.string());
        h.toolkitVersion = toolkitVersion(include);
    }
    addHeaders(h);

    Sha256 sha;
    sha.updateField("nvrtc-headers-1");
    sha.updateField(h.toolkitVersion);
    sha.updateU64(h.includeDirs.size());
    for (const std::string& dir : h.includeDirs)
        sha.updateField(dir);
    sha.updateU64(h.names.size());
    for (std::size_t i = 0; i < h.names.size(); ++i) {
        sha.updateField(h.names[i]);
        sha.updateField(h.texts[i]);
    }
    h.digest = Sha256::hex(sha.finish());
    return h;
}

const NvrtcHeaders& nvrtcHeaders() {
    static const NvrtcHeaders headers = [] {
        std::vector<fs::path> roots;
        if (fs::path own = nvrtcLibraryRoot(); !own.empty())
            roots.push_back(std::move(own));
        for (fs::path& root : cudaToolkitRoots())
            roots.push_back(std::move(root));
        return findNvrtcHeaders(roots, nvrtcVersionString());
    }();
    return headers;
}

const std::string* nvrtcHeaderText(const NvrtcHeaders& headers, std::string_view name) {
    const auto at = std::find(headers.names.begin(), headers.names.end(), name);
    return at == headers.names.end() ? nullptr : &headers.texts[static_cast<std::size_t>(at - headers.names.begin())];
}

std::string missingHeaderMessage(std::string_view log, const CompileRequest& request, const NvrtcHeaders& headers) {
    static constexpr std::string_view kCannotOpen = "cannot open source file \"";
    const std::size_t at = log.find(kCannotOpen);
    if (at == std::string_view::npos)
        return {};
    const std::size_t lineStart = log.rfind('\n', at) == std::string_view::npos ? 0 : log.rfind('\n', at) + 1;
    const std::size_t nameStart = at + kCannotOpen.size();
    const std::size_t nameEnd = log.find('"', nameStart);
    if (nameEnd == std::string_view::npos)
        return {};
    const std::string line(log.substr(lineStart, nameEnd + 1 - lineStart));
    const std::string name(log.substr(nameStart, nameEnd - nameStart));

    // The folders in NVRTC's order: the including file's own (for a quoted name), the request's,
    // the options' -I, the toolkit's.
    std::vector<std::string> dirs = request.includeDirs;
    const std::vector<std::string>& options = request.options;
    for (std::size_t i = 0; i < options.size(); ++i) {
        const std::string& o = options[i];
        if ((o == "-I" || o == "--include-path") && i + 1 < options.size())
            dirs.push_back(options[++i]);
        else if (o.rfind("--include-path=", 0) == 0)
            dirs.push_back(o.substr(15));
        else if (o.rfind("-I", 0) == 0 && o.size() > 2)
            dirs.push_back(o.substr(2));
    }
    dirs.insert(dirs.end(), headers.includeDirs.begin(), headers.includeDirs.end());
    std::string folders;
    for (const std::string& dir : dirs)
        folders += (folders.empty() ? "" : ", ") + dir;
    std::string message = line + ": \"" + name + "\" is in none of the folders searched (" +
                          (folders.empty() ? std::string("none") : folders) + ")";
    if (headers.root.empty()) {
        std::string roots;
        for (const fs::path& root : headers.searched)
            roots += (roots.empty() ? "" : ", ") + root.string();
        message += "; no CUDA toolkit's headers were found (looked for include/cuda.h in " +
                   (roots.empty() ? std::string("no folder") : roots) + "; set CUDA_HOME to the toolkit)";
    } else {
        message += " nor among the C and C++ headers Tilescope gives NVRTC";
    }
    return message;
}

std::string unrollFactorMessage(std::string_view log) {
    static constexpr std::string_view kStart = "identifier \"loop_unroll_factor";
    const std::size_t at = log.find(kStart);
    if (at == std::string_view::npos)
        return {};
    const std::size_t close = log.find('"', at + kStart.size());
    static constexpr std::string_view kUndefined = "\" is undefined";
    if (close == std::string_view::npos || log.substr(close, kUndefined.size()) != kUndefined)
        return {};
    const std::string name(log.substr(at + 12, close - at - 12));
    const std::size_t lineStart = log.rfind('\n', at) == std::string_view::npos ? 0 : log.rfind('\n', at) + 1;
    return std::string(log.substr(lineStart, close + kUndefined.size() - lineStart)) + ": " + name +
           " is defined (as a constexpr int, Kernel Tuner's convention for `#pragma unroll " + name +
           "`) only when it is a tuning parameter: tune it (0 leaves the loop as the compiler unrolls it) or write "
           "the factor in the pragma";
}

std::string removedIntrinsicMessage(std::string_view log) {
    // Each with the arguments of its _sync form after the mask.
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kRemoved = {{
        {"__shfl", "value, srcLane"},
        {"__shfl_up", "value, delta"},
        {"__shfl_down", "value, delta"},
        {"__shfl_xor", "value, laneMask"},
        {"__any", "predicate"},
        {"__all", "predicate"},
        {"__ballot", "predicate"},
    }};
    for (const auto& [name, arguments] : kRemoved) {
        const std::string undefined = "identifier \"" + std::string(name) + "\" is undefined";
        const std::size_t at = log.find(undefined);
        if (at == std::string_view::npos)
            continue;
        const std::size_t lineStart = log.rfind('\n', at) == std::string_view::npos ? 0 : log.rfind('\n', at) + 1;
        const std::string line(log.substr(lineStart, at + undefined.size() - lineStart));
        return line + ": " + std::string(name) + " was removed in CUDA 9; use " + std::string(name) +
               "_sync(0xffffffff, " + std::string(arguments) +
               "), whose first argument is the mask of the lanes taking part";
    }
    return {};
}

} // namespace tilescope
