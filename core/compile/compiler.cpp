#include "compile/compiler.h"

#include "compile/nvcc.h"
#include "compile/nvrtcheaders.h"
#include "compile/nvrtchelper.h"
#include "compile/triton.h"

#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>

namespace tilescope {

namespace {

constexpr std::string_view kDefaultSourceName = "kernel.cu";

// Where an NVIDIA driver is installed, NVRTC serves a program it compiled before from the
// driver's compute cache (~/.nv/ComputeCache) and then ptxas prints no -v report, so the static
// info (registers, spills) would be lost. Tilescope keeps its own cache of full results, so the
// driver's is switched off for this process, once, before the first compile.
// The driver reads the variable when it initializes (cuInit), so it is set at program start too,
// before anything in the process can load the driver.
void disableDriverComputeCache() {
    static std::once_flag once;
    std::call_once(once, [] { ::setenv("CUDA_CACHE_DISABLE", "1", 1); });
}
[[maybe_unused]] const bool kCacheDisabledAtStart = (disableDriverComputeCache(), true);

// Owns an nvrtcProgram so that every early return destroys it.
class Program {
public:
    explicit Program(nvrtcProgram program)
        : m_program(program) {}
    ~Program() { nvrtcDestroyProgram(&m_program); }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;

    nvrtcProgram get() const { return m_program; }

private:
    nvrtcProgram m_program;
};

// ptxas reports its own wall time ("ptxas info    : Compile time = 12.3 ms"); without that line
// the log, like the rest of a result, depends only on the request.
std::string withoutTimings(const std::string& log) {
    static constexpr std::string_view kTiming = "Compile time = ";
    if (log.find(kTiming) == std::string::npos)
        return log;
    std::string kept;
    kept.reserve(log.size());
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        end = end == std::string::npos ? log.size() : end + 1;
        const std::string_view line(log.data() + start, end - start);
        if (!(line.rfind("ptxas", 0) == 0 && line.find(kTiming) != std::string_view::npos))
            kept.append(line);
        start = end;
    }
    while (!kept.empty() && kept.back() == '\n')
        kept.pop_back();
    return kept;
}

std::string programLog(nvrtcProgram program) {
    std::size_t size = 0;
    if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1)
        return {};
    std::string log(size, '\0');
    if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS)
        return {};
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
        log.pop_back();
    // NVRTC joins the front end's log and ptxas' with a NUL byte: a line break in its place, so
    // that no message begins with one.
    std::replace(log.begin(), log.end(), '\0', '\n');
    return withoutTimings(log);
}

// The line of the log a user wants first: the first error, else the first line.
std::string firstError(std::string_view log) {
    std::string_view first;
    while (!log.empty()) {
        const std::size_t newline = log.find('\n');
        const std::string_view line = log.substr(0, newline);
        log.remove_prefix(newline == std::string_view::npos ? log.size() : newline + 1);
        if (line.find("error") != std::string_view::npos)
            return std::string(line);
        if (first.empty())
            first = line;
    }
    return std::string(first);
}

// Creates the program with the headers Tilescope gives NVRTC (compile/nvrtcheaders.h).
nvrtcResult createProgram(nvrtcProgram* program, const std::string& source, const std::string& name) {
    const NvrtcHeaders& headers = nvrtcHeaders();
    std::vector<const char*> texts;
    std::vector<const char*> names;
    texts.reserve(headers.names.size());
    names.reserve(headers.names.size());
    for (std::size_t i = 0; i < headers.names.size(); ++i) {
        names.push_back(headers.names[i].c_str());
        texts.push_back(headers.texts[i].c_str());
    }
    return nvrtcCreateProgram(program, source.c_str(), name.c_str(), static_cast<int>(names.size()), texts.data(),
                              names.data());
}

const std::vector<std::string>& cachedSupportedArchs() {
    static const std::vector<std::string> archs = supportedArchs();
    return archs;
}

// NVRTC's own message for an arch it lacks ("invalid value for --gpu-architecture") does not
// say which archs it takes, so the request is checked against its list first.
std::string validate(const CompileRequest& request) {
    return checkCompileRequest(request, cachedSupportedArchs(), "NVRTC " + nvrtcVersionString());
}

// NVRTC compiles a name expression as a line of its own "__nv_name_map" file: errors there and
// nowhere else mean the source is fine but names no such kernel.
bool nameExpressionFailed(std::string_view log) {
    bool any = false;
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        end = end == std::string_view::npos ? log.size() : end;
        const std::string_view line = log.substr(start, end - start);
        if (line.find(": error") != std::string_view::npos ||
            line.find(": catastrophic error") != std::string_view::npos) {
            if (line.rfind("__nv_name_map", 0) != 0)
                return false;
            any = true;
        }
        start = end + 1;
    }
    return any;
}

// "identifier "bar" is undefined" from the first name-map error.
std::string nameExpressionError(std::string_view log) {
    const std::size_t at = log.find("__nv_name_map");
    const std::size_t colon = log.find("error: ", at);
    if (at == std::string_view::npos || colon == std::string_view::npos)
        return "NVRTC cannot resolve the name";
    const std::size_t end = log.find('\n', colon);
    return std::string(log.substr(colon + 7, (end == std::string_view::npos ? log.size() : end) - colon - 7));
}

CompileResult failure(CompileStatus status, std::string message, std::string log) {
    CompileResult result;
    result.status = status;
    result.message = std::move(message);
    result.log = boundedLog(std::move(log));
    result.nvrtcVersion = nvrtcVersionString();
    return result;
}

} // namespace

std::string boundedLog(std::string log) {
    constexpr std::size_t kMaxBytes = 64 << 10;
    constexpr std::size_t kMaxLine = 1 << 10;
    if (log.size() <= kMaxLine && log.find('\n') == std::string::npos)
        return log;
    std::string kept;
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        end = end == std::string::npos ? log.size() : end;
        std::string_view line(log.data() + start, end - start);
        std::string cut;
        if (line.size() > kMaxLine) {
            cut = " ... (" + std::to_string(line.size() - kMaxLine) + " more bytes of this line not kept)";
            line = line.substr(0, kMaxLine);
        }
        if (kept.size() + line.size() + cut.size() + 1 > kMaxBytes) {
            kept += "... (the log goes on for " + std::to_string(log.size() - start) + " more bytes, not kept)";
            return kept;
        }
        kept.append(line);
        kept += cut;
        if (end < log.size())
            kept += '\n';
        start = end + 1;
    }
    return kept;
}

std::string_view compileStatusName(CompileStatus status) {
    switch (status) {
    case CompileStatus::Ok:
        return "Ok";
    case CompileStatus::CompileError:
        return "CompileError";
    case CompileStatus::NoKernel:
        return "NoKernel";
    case CompileStatus::Cancelled:
        return "Cancelled";
    }
    return "?";
}

std::string checkCompileRequest(const CompileRequest& request, const std::vector<std::string>& archs,
                                std::string_view compiler) {
    auto isIdentifier = [](std::string_view s) {
        auto isAlpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
        auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
        if (s.empty() || !isAlpha(s.front()))
            return false;
        return std::all_of(s.begin(), s.end(), [&](char c) { return isAlpha(c) || isDigit(c); });
    };
    if (request.kernelName.empty())
        return "no kernel name given";
    if (request.arch.rfind("sm_", 0) != 0)
        return "arch '" + request.arch + "' is not a real GPU architecture such as sm_90 (a cubin needs one)";
    // "sm_90a" and "sm_100f" are the arch-specific variants of a listed number.
    const std::string_view number =
        std::string_view(request.arch).substr(3, request.arch.find_first_not_of("0123456789", 3) - 3);
    if (!archs.empty() && std::find(archs.begin(), archs.end(), "sm_" + std::string(number)) == archs.end())
        return "arch '" + request.arch + "' is not supported by " + std::string(compiler) + " (" + archs.front() +
               " to " + archs.back() + ")";
    for (const auto& [name, value] : request.defines) {
        if (!isIdentifier(name))
            return "define name '" + name + "' is not an identifier";
        if (value.find('\r') != std::string::npos)
            return "the value of define " + name + " contains a carriage return";
    }
    return {};
}

std::vector<std::string> compileOptions(const CompileRequest& request) {
    std::vector<std::string> options;
    options.reserve(2 + request.includeDirs.size() + request.options.size() + nvrtcHeaders().includeDirs.size());
    options.push_back("--gpu-architecture=" + request.arch);
    options.emplace_back("--ptxas-options=-v");
    for (const std::string& dir : request.includeDirs)
        options.push_back("-I" + dir);
    options.insert(options.end(), request.options.begin(), request.options.end());
    // The toolkit's folders last, as nvcc searches them after the -I folders given.
    for (const std::string& dir : nvrtcHeaders().includeDirs)
        options.push_back("-I" + dir);
    return options;
}

CompileResult compileKernel(const CompileRequest& request) {
    if (request.language == SourceLanguage::Triton)
        return compileTriton(request);
    if (request.compiler == CudaCompiler::Nvcc)
        return compileNvcc(request);
    if (std::string problem = validate(request); !problem.empty())
        return failure(CompileStatus::CompileError, problem, problem);
    // NVRTC's front end compiles one program at a time in a process: a helper process per thread
    // where there can be one (compile/nvrtchelper.h).
    if (std::optional<CompileResult> helped = compileInNvrtcHelper(request))
        return std::move(*helped);

    disableDriverComputeCache();
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

    const std::string name = request.sourceName.empty() ? std::string(kDefaultSourceName) : request.sourceName;
    const std::string source = preparedSource(request);
    nvrtcProgram raw = nullptr;
    if (const nvrtcResult rc = createProgram(&raw, source, name); rc != NVRTC_SUCCESS) {
        CompileResult result =
            failure(CompileStatus::CompileError,
                    std::string("NVRTC could not create the program: ") + nvrtcGetErrorString(rc), {});
        result.seconds = elapsed();
        result.transient = true;
        return result;
    }
    Program program(raw);
    // The entry function by its C++ name: NVRTC tells the name it has in the cubin, so kernels
    // need not be extern "C", and templates instantiate from the name ("scale<block_size_x>").
    if (const nvrtcResult added = nvrtcAddNameExpression(program.get(), request.kernelName.c_str());
        added != NVRTC_SUCCESS) {
        CompileResult result =
            failure(CompileStatus::CompileError,
                    "kernel name '" + request.kernelName + "' is not usable: " + nvrtcGetErrorString(added), {});
        result.seconds = elapsed();
        return result;
    }

    const std::vector<std::string> options = compileOptions(request);
    std::vector<const char*> argv;
    argv.reserve(options.size());
    for (const std::string& option : options)
        argv.push_back(option.c_str());

    const nvrtcResult rc = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
    std::string log = programLog(program.get());
    if (rc == NVRTC_ERROR_COMPILATION && nameExpressionFailed(log)) {
        // The source compiles; the kernel name does not name one of its __global__ functions.
        std::string message =
            "no __global__ function '" + request.kernelName + "' in " + name + " (" + nameExpressionError(log) + ")";
        CompileResult result = failure(CompileStatus::NoKernel, std::move(message), std::move(log));
        result.seconds = elapsed();
        return result;
    }
    if (rc != NVRTC_SUCCESS) {
        // Compiler diagnostics already name the file and line; other failures (a bad option)
        // need NVRTC's word for what went wrong.
        std::string message = missingHeaderMessage(log, request, nvrtcHeaders());
        if (message.empty())
            message = removedIntrinsicMessage(log);
        if (message.empty())
            message = unrollFactorMessage(log);
        if (message.empty())
            message = firstError(log);
        if (rc != NVRTC_ERROR_COMPILATION)
            message = std::string(nvrtcGetErrorString(rc)) + (message.empty() ? "" : ": " + message);
        CompileResult result = failure(CompileStatus::CompileError, std::move(message), std::move(log));
        result.seconds = elapsed();
        // Out of memory or an internal NVRTC error may pass; a rejected source or option will not.
        result.transient = rc == NVRTC_ERROR_OUT_OF_MEMORY || rc == NVRTC_ERROR_INTERNAL_ERROR ||
                           rc == NVRTC_ERROR_BUILTIN_OPERATION_FAILURE;
        return result;
    }

    CompileResult result;
    std::size_t cubinSize = 0;
    if (nvrtcGetCUBINSize(program.get(), &cubinSize) != NVRTC_SUCCESS || cubinSize == 0) {
        result = failure(CompileStatus::CompileError,
                         "NVRTC produced no cubin (is '" + request.arch + "' a real arch?)", std::move(log));
        result.seconds = elapsed();
        result.transient = true;
        return result;
    }
    result.cubin.resize(cubinSize);
    if (nvrtcGetCUBIN(program.get(), result.cubin.data()) != NVRTC_SUCCESS) {
        result = failure(CompileStatus::CompileError, "NVRTC could not return the cubin", std::move(log));
        result.seconds = elapsed();
        result.transient = true;
        return result;
    }
    result.seconds = elapsed();
    result.nvrtcVersion = nvrtcVersionString();
    const char* lowered = nullptr;
    if (nvrtcGetLoweredName(program.get(), request.kernelName.c_str(), &lowered) == NVRTC_SUCCESS && lowered)
        result.entryName = lowered;
    else
        result.entryName = request.kernelName;
    // One arch per program, so the first entry of that name is the one.
    result.info = parsePtxasLog(log, result.entryName);
    const bool reported = log.find("Compiling entry function") != std::string::npos;
    result.log = boundedLog(std::move(log));
    if (result.info.registers < 0 && !reported) {
        // A cubin without any ptxas report: something served it from a cache of its own.
        result.status = CompileStatus::NoKernel;
        result.message = "ptxas printed no report for " + name + ", so registers and spills are unknown";
        result.transient = true;
    } else if (result.info.registers < 0) {
        result.status = CompileStatus::NoKernel;
        result.message =
            "ptxas reported no entry function '" + result.entryName + "' for '" + request.kernelName + "' in " + name;
    } else {
        result.status = CompileStatus::Ok;
    }
    return result;
}

PtxResult generatePtx(const CompileRequest& request) {
    PtxResult result;
    if (request.language == SourceLanguage::Triton) {
        result.log = "the PTX of a Triton kernel is Triton's, not NVRTC's";
        return result;
    }
    if (request.compiler == CudaCompiler::Nvcc)
        return generateNvccPtx(request);
    if (std::string problem = validate(request); !problem.empty()) {
        result.log = problem;
        return result;
    }
    const std::string name = request.sourceName.empty() ? std::string(kDefaultSourceName) : request.sourceName;
    const std::string source = preparedSource(request);
    nvrtcProgram raw = nullptr;
    if (const nvrtcResult rc = createProgram(&raw, source, name); rc != NVRTC_SUCCESS) {
        result.log = std::string("NVRTC could not create the program: ") + nvrtcGetErrorString(rc);
        return result;
    }
    Program program(raw);
    nvrtcAddNameExpression(program.get(), request.kernelName.c_str()); // instantiates a template kernel

    // compileOptions() less the ptxas report, with the virtual arch of the same number.
    std::vector<std::string> options = compileOptions(request);
    options.erase(std::remove(options.begin(), options.end(), std::string("--ptxas-options=-v")), options.end());
    options.front() = "--gpu-architecture=compute_" + request.arch.substr(3);
    std::vector<const char*> argv;
    for (const std::string& option : options)
        argv.push_back(option.c_str());
    const nvrtcResult rc = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
    result.log = boundedLog(programLog(program.get()));
    if (rc != NVRTC_SUCCESS)
        return result;
    std::size_t size = 0;
    if (nvrtcGetPTXSize(program.get(), &size) != NVRTC_SUCCESS || size == 0)
        return result;
    result.ptx.resize(size);
    if (nvrtcGetPTX(program.get(), result.ptx.data()) != NVRTC_SUCCESS)
        return result;
    while (!result.ptx.empty() && result.ptx.back() == '\0')
        result.ptx.pop_back();
    result.ok = true;
    return result;
}

std::string nvrtcVersionString() {
    static const std::string version = [] {
        int major = 0;
        int minor = 0;
        if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
            return std::string("unknown");
        return std::to_string(major) + "." + std::to_string(minor);
    }();
    return version;
}

std::vector<std::string> supportedArchs() {
    int count = 0;
    if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0)
        return {};
    std::vector<int> archs(static_cast<std::size_t>(count));
    if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS)
        return {};
    std::sort(archs.begin(), archs.end());
    std::vector<std::string> names;
    names.reserve(archs.size());
    for (int arch : archs)
        names.push_back("sm_" + std::to_string(arch));
    return names;
}

} // namespace tilescope
