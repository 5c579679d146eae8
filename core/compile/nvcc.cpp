#include "compile/nvcc.h"

#include "base/cudatools.h"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string_view>
#include <system_error>

namespace tilescope {

namespace fs = std::filesystem;

// Named, not anonymous: a unity build puts compiler.cpp's helpers of the same names beside these.
namespace nvccimpl {

constexpr std::string_view kDefaultSourceName = "kernel.cu";
// The file name of the line that takes the kernel's address: errors there, and only there, mean
// that the source compiles but names no such kernel.
constexpr std::string_view kEntryFile = "tilescope-entry";
// CUTLASS's heaviest configs take a few minutes; past this nvcc is stuck.
constexpr int kTimeoutMs = 20 * 60 * 1000;
constexpr const char* kEnvVar = "TILESCOPE_NVCC";

bool executable(const fs::path& path) {
    std::error_code ec;
    return !path.empty() && fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::string lookedIn(const std::vector<fs::path>& cudaDirs) {
    std::string dirs;
    for (const fs::path& root : cudaDirs)
        dirs += (dirs.empty() ? "" : ", ") + (root / "bin").string();
    return "on PATH, in $CUDA_HOME/bin (or $CUDA_PATH, $CUDA_ROOT)" + (dirs.empty() ? std::string() : " or in " + dirs);
}

const char* kHowToGet = "install the CUDA toolkit's nvcc (cuda-nvcc-13-0 from NVIDIA's package repository, or the "
                        "whole toolkit), or set TILESCOPE_NVCC to nvcc or to the toolkit's folder";

// `nvcc --version`'s "release 13.0," -> "13.0".
std::string releaseOf(std::string_view text) {
    const std::size_t at = text.find("release ");
    if (at == std::string_view::npos)
        return {};
    const std::size_t start = at + 8;
    const std::size_t end = text.find_first_of(", \n", start);
    return std::string(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
}

// ptxas reports its own wall time; without that line the log depends only on the request.
std::string withoutTimings(std::string_view log) {
    static constexpr std::string_view kTiming = "Compile time = ";
    std::string kept;
    kept.reserve(log.size());
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        end = end == std::string_view::npos ? log.size() : end + 1;
        const std::string_view line = log.substr(start, end - start);
        if (!(line.rfind("ptxas", 0) == 0 && line.find(kTiming) != std::string_view::npos))
            kept.append(line);
        start = end;
    }
    while (!kept.empty() && (kept.back() == '\n' || kept.back() == '\r'))
        kept.pop_back();
    return kept;
}

std::string replaceAll(std::string text, std::string_view from, std::string_view to) {
    if (from.empty())
        return text;
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

std::vector<std::string_view> linesOf(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const std::size_t newline = text.find('\n');
        lines.push_back(text.substr(0, newline));
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    }
    return lines;
}

bool isErrorLine(std::string_view line) {
    return line.find(": error") != std::string_view::npos ||
           line.find(": catastrophic error") != std::string_view::npos || line.rfind("nvcc fatal", 0) == 0 ||
           line.rfind("ptxas fatal", 0) == 0 || line.rfind("ptxas error", 0) == 0;
}

// The line a user wants first: the first error, else the first line.
std::string firstError(std::string_view log) {
    std::string_view first;
    for (std::string_view line : linesOf(log)) {
        if (isErrorLine(line))
            return std::string(line);
        if (first.empty())
            first = line;
    }
    return std::string(first);
}

// Every error is in the line that takes the kernel's address: the source names no such kernel.
bool onlyEntryFailed(std::string_view log) {
    bool any = false;
    for (std::string_view line : linesOf(log)) {
        if (!isErrorLine(line))
            continue;
        if (line.rfind(kEntryFile, 0) != 0)
            return false;
        any = true;
    }
    return any;
}

std::string entryError(std::string_view log) {
    for (std::string_view line : linesOf(log)) {
        if (line.rfind(kEntryFile, 0) == 0 && isErrorLine(line)) {
            const std::size_t colon = line.find("error: ");
            return std::string(colon == std::string_view::npos ? line : line.substr(colon + 7));
        }
    }
    return "nvcc cannot resolve the name";
}

std::string withoutSpaces(std::string_view text) {
    std::string out;
    for (char c : text)
        if (c != ' ' && c != '\t')
            out += c;
    return out;
}

// "void ns::scale<128, 4>(float*)" -> "ns::scale<128,4>": a demangled kernel's name as C++ writes
// it in a call, without its return type and parameters, and without spaces.
std::string callableName(const std::string& mangled) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                                     std::free);
    std::string name = status == 0 && demangled ? std::string(demangled.get()) : mangled;
    if (!name.empty() && name.back() == ')') {
        int depth = 0;
        for (std::size_t i = name.size(); i-- > 0;) {
            if (name[i] == ')')
                ++depth;
            else if (name[i] == '(' && --depth == 0) {
                name.resize(i);
                break;
            }
        }
    }
    if (name.rfind("void ", 0) == 0)
        name.erase(0, 5);
    return withoutSpaces(name);
}

CompileResult failure(CompileStatus status, std::string message, std::string log) {
    CompileResult result;
    result.status = status;
    result.message = std::move(message);
    result.log = boundedLog(std::move(log));
    const NvccSetup& setup = nvccSetup();
    result.nvrtcVersion = setup.ok ? "nvcc " + setup.release : "nvcc";
    return result;
}

// A folder of its own for one compile, removed with it.
class ScratchFolder {
public:
    ScratchFolder() {
        std::error_code ec;
        fs::path base = fs::temp_directory_path(ec);
        if (ec)
            base = "/tmp";
        std::string pattern = (base / "tilescope-nvcc-XXXXXX").string();
        if (::mkdtemp(pattern.data()) != nullptr)
            m_path = pattern;
        else
            m_error = std::strerror(errno);
    }
    ~ScratchFolder() {
        std::error_code ec;
        if (!m_path.empty())
            fs::remove_all(m_path, ec);
    }
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;
    const fs::path& path() const { return m_path; }
    const std::string& error() const { return m_error; }

private:
    fs::path m_path;
    std::string m_error;
};

bool writeFile(const fs::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    return static_cast<bool>(out.flush());
}

bool namesArch(const std::string& option) {
    return option == "-arch" || option == "--gpu-architecture" || option.rfind("-arch=", 0) == 0 ||
           option.rfind("--gpu-architecture=", 0) == 0 || option.rfind("-gencode", 0) == 0 ||
           option.rfind("--generate-code", 0) == 0;
}

// What nvcc is run on: the source with the defines' prefix, then a line that takes the kernel's
// address, which instantiates a template kernel as NVRTC's name expression would.
std::string nvccSource(const CompileRequest& request) {
    std::string source = preparedSource(request);
    if (!source.empty() && source.back() != '\n')
        source += '\n';
    source += "#line 1 \"" + std::string(kEntryFile) + "\"\n";
    source += "static const void* const tilescope_entry_address = (const void*)&" + request.kernelName + ";\n";
    return source;
}

std::string sourceFileName(const CompileRequest& request) {
    std::string name = request.sourceName.empty() ? std::string(kDefaultSourceName) : request.sourceName;
    name = fs::path(name).filename().string();
    return name.empty() || name == "." || name == ".." ? std::string(kDefaultSourceName) : name;
}

struct NvccRun {
    ProcessOutput output;
    std::string log;   ///< stdout and stderr, the scratch folder's path left out
    std::string error; ///< why nvcc did not run
};

// Runs nvcc with `options` on the request's source in a scratch folder; `outputName` is the file
// it writes there, read into `output` when asked.
NvccRun runNvcc(const CompileRequest& request, std::vector<std::string> options, const std::string& outputName,
                std::string* outputText) {
    NvccRun run;
    const NvccSetup& setup = nvccSetup();
    ScratchFolder folder;
    if (folder.path().empty()) {
        run.error = "cannot make a folder for nvcc: " + folder.error();
        return run;
    }
    const std::string name = sourceFileName(request);
    const fs::path sourcePath = folder.path() / name;
    const fs::path outputPath = folder.path() / outputName;
    if (!writeFile(sourcePath, nvccSource(request))) {
        run.error = "cannot write the source for nvcc in " + folder.path().string();
        return run;
    }
    std::vector<std::string> argv{setup.path.string()};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"-o", outputPath.string(), sourcePath.string()});
    run.output = runTool(argv, kTimeoutMs);
    std::string log = run.output.out;
    if (!log.empty() && !run.output.err.empty() && log.back() != '\n')
        log += '\n';
    log += run.output.err;
    // Diagnostics name the source as the user knows it: "gemm.cu(12): error ...".
    run.log = withoutTimings(replaceAll(std::move(log), folder.path().string() + "/", ""));
    if (outputText && run.output.started && run.output.status == 0) {
        std::ifstream in(outputPath, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (in)
            *outputText = text.str();
    }
    return run;
}

} // namespace nvccimpl

NvccSetup findNvcc(const std::vector<fs::path>& cudaDirs) {
    NvccSetup setup;
    if (const char* named = std::getenv(nvccimpl::kEnvVar); named && *named) {
        const fs::path path(named);
        std::error_code ec;
        if (fs::is_directory(path, ec)) {
            for (const fs::path& candidate : {path / "bin" / "nvcc", path / "nvcc"}) {
                if (nvccimpl::executable(candidate)) {
                    setup.path = candidate;
                    break;
                }
            }
            if (setup.path.empty()) {
                setup.error = "nvcc is not on this machine: TILESCOPE_NVCC names the folder " + path.string() +
                              ", which has no nvcc (as bin/nvcc or nvcc); " + nvccimpl::kHowToGet;
                return setup;
            }
        } else if (nvccimpl::executable(path)) {
            setup.path = path;
        } else {
            setup.error = "TILESCOPE_NVCC names " + path.string() +
                          ", which is neither nvcc nor a toolkit's folder: point it at nvcc or unset it";
            return setup;
        }
    } else {
        std::string ignored;
        // The variable is unset here, so the search is PATH's and the toolkit folders'.
        setup.path = findCudaTool("nvcc", nvccimpl::kEnvVar, &ignored, cudaDirs);
        if (setup.path.empty()) {
            setup.error =
                "nvcc is not on this machine (looked " + nvccimpl::lookedIn(cudaDirs) + "): " + nvccimpl::kHowToGet;
            return setup;
        }
    }
    const ProcessOutput version = runTool({setup.path.string(), "--version"}, 60000);
    setup.release = nvccimpl::releaseOf(version.out);
    if (!version.started || version.status != 0 || setup.release.empty()) {
        setup.error =
            setup.path.string() + " --version " +
            (!version.started ? "did not start (" + version.error + ")"
                              : "did not say which release it is (status " + std::to_string(version.status) + ")") +
            ": " + nvccimpl::kHowToGet;
        return setup;
    }
    setup.identity = version.out;
    setup.ok = true;
    return setup;
}

const NvccSetup& nvccSetup() {
    static const NvccSetup setup = findNvcc(standardCudaDirs());
    return setup;
}

std::vector<std::string> nvccOptions(const CompileRequest& request) {
    std::vector<std::string> options{"-cubin", "-x", "cu"};
    if (std::none_of(request.options.begin(), request.options.end(), nvccimpl::namesArch))
        options.push_back("--gpu-architecture=" + request.arch);
    options.emplace_back("--ptxas-options=-v");
    for (const std::string& dir : request.includeDirs)
        options.push_back("-I" + dir);
    options.insert(options.end(), request.options.begin(), request.options.end());
    return options;
}

CompileResult compileNvcc(const CompileRequest& request) {
    if (std::string problem = checkCompileRequest(request); !problem.empty())
        return nvccimpl::failure(CompileStatus::CompileError, problem, problem);
    const NvccSetup& setup = nvccSetup();
    if (!setup.ok) {
        CompileResult result = nvccimpl::failure(CompileStatus::CompileError, setup.error, setup.error);
        result.transient = true;
        return result;
    }
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

    std::string cubin;
    nvccimpl::NvccRun run = nvccimpl::runNvcc(request, nvccOptions(request), "kernel.cubin", &cubin);
    const std::string name = nvccimpl::sourceFileName(request);
    if (!run.error.empty() || !run.output.started) {
        CompileResult result = nvccimpl::failure(
            CompileStatus::CompileError, run.error.empty() ? "nvcc did not start: " + run.output.error : run.error, {});
        result.seconds = elapsed();
        result.transient = true;
        return result;
    }
    std::string log = std::move(run.log);
    if (run.output.timedOut || run.output.status != 0) {
        CompileResult result;
        if (run.output.timedOut) {
            result = nvccimpl::failure(CompileStatus::CompileError,
                                       "nvcc ran past " + std::to_string(nvccimpl::kTimeoutMs / 60000) +
                                           " minutes and was stopped",
                                       std::move(log));
            result.transient = true;
        } else if (nvccimpl::onlyEntryFailed(log)) {
            result = nvccimpl::failure(CompileStatus::NoKernel,
                                       "no __global__ function '" + request.kernelName + "' in " + name + " (" +
                                           nvccimpl::entryError(log) + ")",
                                       std::move(log));
        } else {
            std::string message = nvccimpl::firstError(log);
            if (message.empty())
                message = "nvcc failed with status " + std::to_string(run.output.status);
            result = nvccimpl::failure(CompileStatus::CompileError, std::move(message), std::move(log));
            // Killed (out of memory, a signal) may pass; a rejected source or option will not.
            result.transient = run.output.status >= 128;
        }
        result.seconds = elapsed();
        return result;
    }
    if (cubin.empty()) {
        CompileResult result = nvccimpl::failure(CompileStatus::CompileError, "nvcc produced no cubin", std::move(log));
        result.seconds = elapsed();
        result.transient = true;
        return result;
    }

    CompileResult result;
    result.cubin.assign(cubin.begin(), cubin.end());
    result.seconds = elapsed();
    result.nvrtcVersion = "nvcc " + setup.release;
    // The entry by its C++ name: ptxas names it mangled unless it is extern "C".
    const std::vector<PtxasEntry> entries = parsePtxasEntries(log);
    const std::string wanted = nvccimpl::withoutSpaces(request.kernelName);
    for (const PtxasEntry& entry : entries) {
        if (entry.function == request.kernelName || nvccimpl::callableName(entry.function) == wanted) {
            result.entryName = entry.function;
            break;
        }
    }
    // A name the demangler spells otherwise (a template argument given as a macro's name): the
    // source took its address, so it is there; where ptxas compiled only one kernel, that is it.
    if (result.entryName.empty() && entries.size() == 1)
        result.entryName = entries.front().function;
    if (!result.entryName.empty())
        result.info = parsePtxasLog(log, result.entryName);
    const bool reported = log.find("Compiling entry function") != std::string::npos;
    result.log = boundedLog(std::move(log));
    if (result.entryName.empty() && reported) {
        std::string found;
        for (const PtxasEntry& entry : entries)
            found += (found.empty() ? "" : ", ") + nvccimpl::callableName(entry.function);
        result.status = CompileStatus::NoKernel;
        result.message = "ptxas compiled no entry function that '" + request.kernelName + "' names in " + name +
                         " (it compiled " + found + ")";
    } else if (result.info.registers < 0) {
        result.status = CompileStatus::NoKernel;
        result.message = "ptxas printed no report for '" + request.kernelName + "' in " + name +
                         ", so registers and spills are unknown";
        result.transient = !reported;
    } else {
        result.status = CompileStatus::Ok;
    }
    return result;
}

std::string expandEnvironment(const std::string& option, std::string* error) {
    std::string out;
    for (std::size_t i = 0; i < option.size(); ++i) {
        if (option[i] != '$') {
            out += option[i];
            continue;
        }
        if (i + 1 < option.size() && option[i + 1] == '$') {
            out += '$';
            ++i;
            continue;
        }
        const bool braced = i + 1 < option.size() && option[i + 1] == '{';
        std::size_t start = i + (braced ? 2 : 1);
        std::size_t end = start;
        while (end < option.size() && (std::isalnum(static_cast<unsigned char>(option[end])) || option[end] == '_'))
            ++end;
        const std::string name = option.substr(start, end - start);
        if (name.empty() || (braced && (end >= option.size() || option[end] != '}'))) {
            if (error)
                *error = "'" + option + "' has a '$' that names no variable (write $NAME or ${NAME}, or $$ for a '$')";
            return {};
        }
        const char* value = std::getenv(name.c_str());
        if (!value || !*value) {
            if (error)
                *error = "'" + option + "' names the environment variable " + name + ", which is not set";
            return {};
        }
        out += value;
        i = braced ? end : end - 1;
    }
    return out;
}

std::string missingNvccHeader(const fs::path& kernel, std::string_view source,
                              const std::vector<fs::path>& includeDirs) {
    std::vector<fs::path> dirs = includeDirs;
    // nvcc's own: the toolkit's include folder beside its bin, with CCCL's.
    if (const NvccSetup& setup = nvccSetup(); setup.ok) {
        const fs::path root = setup.path.parent_path().parent_path();
        dirs.push_back(root / "include");
        dirs.push_back(root / "include" / "cccl");
    }
    std::size_t lineNumber = 0;
    for (std::string_view line : nvccimpl::linesOf(source)) {
        ++lineNumber;
        std::size_t at = line.find_first_not_of(" \t");
        if (at == std::string_view::npos || line[at] != '#')
            continue;
        at = line.find_first_not_of(" \t", at + 1);
        if (at == std::string_view::npos || line.substr(at, 7) != "include")
            continue;
        at = line.find_first_not_of(" \t", at + 7);
        if (at == std::string_view::npos || (line[at] != '"' && line[at] != '<'))
            continue;
        const bool quoted = line[at] == '"';
        const std::size_t end = line.find(quoted ? '"' : '>', at + 1);
        if (end == std::string_view::npos)
            continue;
        const std::string name(line.substr(at + 1, end - at - 1));
        if (name.find('/') == std::string::npos || fs::path(name).is_absolute())
            continue;
        std::vector<fs::path> folders;
        if (quoted)
            folders.push_back(kernel.parent_path());
        folders.insert(folders.end(), dirs.begin(), dirs.end());
        std::error_code ec;
        if (std::any_of(folders.begin(), folders.end(),
                        [&](const fs::path& dir) { return fs::is_regular_file(dir / name, ec); }))
            continue;
        std::string searched;
        for (const fs::path& dir : folders)
            searched += (searched.empty() ? "" : ", ") + dir.string();
        return kernel.filename().string() + " line " + std::to_string(lineNumber) + " includes <" + name +
               ">, which is in none of the folders searched (" + searched + ")";
    }
    return {};
}

PtxResult generateNvccPtx(const CompileRequest& request) {
    PtxResult result;
    if (std::string problem = checkCompileRequest(request); !problem.empty()) {
        result.log = problem;
        return result;
    }
    if (!nvccSetup().ok) {
        result.log = nvccSetup().error;
        return result;
    }
    std::vector<std::string> options = nvccOptions(request);
    options.front() = "-ptx";
    options.erase(std::remove(options.begin(), options.end(), std::string("--ptxas-options=-v")), options.end());
    for (std::string& option : options) {
        if (option == "--gpu-architecture=" + request.arch)
            option = "--gpu-architecture=compute_" + request.arch.substr(3);
    }
    nvccimpl::NvccRun run = nvccimpl::runNvcc(request, options, "kernel.ptx", &result.ptx);
    result.log = boundedLog(run.error.empty() ? std::move(run.log) : run.error);
    result.ok = run.error.empty() && run.output.started && run.output.status == 0 && !result.ptx.empty();
    return result;
}

} // namespace tilescope
