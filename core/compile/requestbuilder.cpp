#include "compile/requestbuilder.h"

#include "base/error.h"

#include "compile/nvcc.h"
#include "compile/sass.h"
#include "compile/triton.h"
#include "spec/launchgeometry.h"
#include "spec/launchplan.h"
#include "spec/tritonscan.h"
#include "spec/tuningproblem.h"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

namespace tilescope {

std::string compilerLabel(const TuningProblem& problem) {
    if (problem.usesNvcc() && !problem.isTriton()) {
        const NvccSetup& setup = nvccSetup();
        return setup.ok ? "nvcc " + setup.release : "nvcc";
    }
    if (!problem.isTriton())
        return "NVRTC " + nvrtcVersionString();
    const TritonSetup& setup = tritonSetup();
    return setup.ok ? "Triton " + setup.version : "Triton";
}

std::string defineValue(const expr::Value& value) {
    switch (value.kind) {
    case expr::Kind::Int:
        return std::to_string(value.i);
    case expr::Kind::Bool:
        return value.i ? "1" : "0";
    case expr::Kind::Str:
        return *value.s;
    case expr::Kind::Float:
    case expr::Kind::List:
        break;
    }
    return expr::repr(value);
}

namespace {

namespace fs = std::filesystem;

constexpr char kKernelField[] = "/KernelSpecification/KernelFile";
// Larger than any kernel and its headers; a file past it is not source (a log, a data file).
constexpr std::uintmax_t kMaxSourceBytes = 16u << 20;
// Headers followed when checking what a kernel includes (a real kernel has a few dozen).
constexpr std::size_t kMaxHeaders = 4096;

// Why `path` is no source file a compiler can read, or "" when it is one.
std::string sourceFileProblem(const fs::path& path) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status))
        return "not found";
    if (fs::is_directory(status))
        return "is a folder, not a source file";
    if (fs::is_fifo(status))
        return "is a named pipe, not a source file (the compiler would wait on it without end)";
    if (!fs::is_regular_file(status))
        return "is not a regular file (a device or a socket), so not a source file";
    const std::uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > kMaxSourceBytes)
        return "is " + std::to_string(size >> 20) + " MiB, more than a source file's " +
               std::to_string(kMaxSourceBytes >> 20) + " MiB";
    return {};
}

// The whole file, or nullopt with errno's reason in `why`.
std::optional<std::string> readSource(const fs::path& path, std::string& why) {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in)
        text << in.rdbuf();
    if (!in || in.bad()) {
        why = errno != 0 ? std::generic_category().message(errno) : "cannot read it";
        return std::nullopt;
    }
    return text.str();
}

// The folders of -I, --include-path and the headers of -include, --pre-include in NVRTC options.
void includeOptions(const std::vector<std::string>& options, std::vector<fs::path>& dirs,
                    std::vector<std::string>& preIncludes) {
    for (std::size_t i = 0; i < options.size(); ++i) {
        const std::string& o = options[i];
        const bool more = i + 1 < options.size();
        if (o == "-I" || o == "--include-path") {
            if (more)
                dirs.emplace_back(options[++i]);
        } else if (o.rfind("--include-path=", 0) == 0) {
            dirs.emplace_back(o.substr(15));
        } else if (o.rfind("-I", 0) == 0) {
            dirs.emplace_back(o.substr(2));
        } else if (o == "-include" || o == "--pre-include") {
            if (more)
                preIncludes.push_back(options[++i]);
        } else if (o.rfind("--pre-include=", 0) == 0) {
            preIncludes.push_back(o.substr(14));
        }
    }
}

// Why `text` is not source text, or "": a NUL byte (a binary file: an executable, an image, a
// database) or bytes that are not UTF-8 (NVRTC would quote them back in its log, and the log is
// stored with the results). Where: the byte's line and column.
std::string sourceTextProblem(std::string_view text, const char* what = "CUDA source") {
    std::size_t line = 1, lineStart = 0;
    const auto where = [&](std::size_t at) {
        return "line " + std::to_string(line) + ", column " + std::to_string(at - lineStart + 1);
    };
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == 0)
            return "holds a NUL byte (" + where(i) + "): a binary file, not " + std::string(what);
        if (c == '\n') {
            ++line;
            lineStart = ++i;
            continue;
        }
        if (c < 0x80) {
            ++i;
            continue;
        }
        // A multi-byte sequence: its length from the lead byte; no overlong forms, surrogates or
        // code points past U+10FFFF (RFC 3629).
        std::size_t length = 0;
        unsigned char low = 0x80, high = 0xBF; // the range of the second byte
        if (c >= 0xC2 && c <= 0xDF) {
            length = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            length = 3;
            low = c == 0xE0 ? 0xA0 : 0x80;
            high = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            length = 4;
            low = c == 0xF0 ? 0x90 : 0x80;
            high = c == 0xF4 ? 0x8F : 0xBF;
        }
        bool ok = length > 0 && i + length <= text.size();
        for (std::size_t k = 1; ok && k < length; ++k) {
            const auto b = static_cast<unsigned char>(text[i + k]);
            ok = k == 1 ? (b >= low && b <= high) : (b >= 0x80 && b <= 0xBF);
        }
        if (!ok) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", c);
            return std::string("is not UTF-8 text (the byte ") + hex + " at " + where(i) + "), so not " + what;
        }
        i += length;
    }
    return {};
}

// The file named by a line `#include "name"` or `#include <name>`: {name, quoted}.
std::optional<std::pair<std::string, bool>> includedName(std::string_view line) {
    auto skipSpace = [&] {
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
    };
    skipSpace();
    if (line.empty() || line.front() != '#')
        return std::nullopt;
    line.remove_prefix(1);
    skipSpace();
    if (line.rfind("include", 0) != 0)
        return std::nullopt;
    line.remove_prefix(7);
    skipSpace();
    if (line.empty() || (line.front() != '"' && line.front() != '<'))
        return std::nullopt; // a macro names it: left to NVRTC
    const bool quoted = line.front() == '"';
    const std::size_t end = line.find(quoted ? '"' : '>', 1);
    if (end == std::string_view::npos || end == 1)
        return std::nullopt;
    return std::pair<std::string, bool>(std::string(line.substr(1, end - 1)), quoted);
}

// NVRTC opens every header a kernel includes, and waits without end on a named pipe (NVRTC 13.0;
// devices it refuses itself). So the headers that #include lines name literally are followed
// first, as NVRTC looks for them (a quoted name beside the including file, then in the include
// folders), each once: a header that is no source file is an error naming the file and line that
// include it. Lines inside comments or #if are followed too, which can only refuse more; a name
// that no folder has, and one given through a macro, are left to NVRTC's own message. A header
// that is not source text (a binary, not UTF-8) is refused as the kernel file is. Returns the
// texts read: the kernel's and its headers'.
std::vector<std::string> checkIncludes(const std::string& problemFile, const fs::path& kernel,
                                       const std::string& source, const std::vector<fs::path>& dirs,
                                       const std::vector<std::string>& preIncludes) {
    struct Pending {
        fs::path file;
        std::string text;
    };
    std::vector<Pending> pending{{kernel, source}};
    std::vector<std::string> texts;
    std::set<fs::path> seen;
    std::error_code ec;
    seen.insert(fs::weakly_canonical(kernel, ec));
    // Finds `name` as NVRTC would and queues it; throws when it is no source file.
    auto follow = [&](const std::string& name, bool quoted, const fs::path& from, const std::string& where) {
        std::vector<fs::path> candidates;
        const fs::path named(name);
        if (named.is_absolute()) {
            candidates.push_back(named);
        } else {
            if (quoted)
                candidates.push_back(from.parent_path() / named);
            for (const fs::path& dir : dirs)
                candidates.push_back(dir / named);
        }
        for (const fs::path& candidate : candidates) {
            std::error_code ignored;
            // Not there, or a folder: NVRTC looks on, as the preprocessor does.
            if (!fs::exists(candidate, ignored) || fs::is_directory(candidate, ignored))
                continue;
            if (const std::string why = sourceFileProblem(candidate); !why.empty())
                throw InputError(problemFile, kKernelField,
                                 where + " includes \"" + name + "\", and " + candidate.string() + " " + why);
            if (seen.insert(fs::weakly_canonical(candidate, ignored)).second && seen.size() <= kMaxHeaders) {
                std::string unreadable; // left to NVRTC's message
                if (std::optional<std::string> text = readSource(candidate, unreadable)) {
                    if (const std::string why = sourceTextProblem(*text); !why.empty())
                        throw InputError(problemFile, kKernelField,
                                         where + " includes \"" + name + "\", and " + candidate.string() + " " + why);
                    pending.push_back({candidate, std::move(*text)});
                }
            }
            return;
        }
    };
    for (const std::string& header : preIncludes)
        follow(header, true, kernel, "the compiler option --pre-include");
    while (!pending.empty()) {
        Pending current = std::move(pending.back());
        pending.pop_back();
        std::size_t lineNumber = 0;
        std::string_view rest = current.text;
        while (!rest.empty()) {
            const std::size_t newline = rest.find('\n');
            const std::string_view line = rest.substr(0, newline);
            rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
            ++lineNumber;
            if (line.find("include") == std::string_view::npos)
                continue;
            if (const auto included = includedName(line))
                follow(included->first, included->second, current.file,
                       current.file.filename().string() + " line " + std::to_string(lineNumber));
        }
        texts.push_back(std::move(current.text));
    }
    return texts;
}

} // namespace

namespace {

// The kernel file's text, checked as a compiler's input: a source file of sane size, readable,
// UTF-8 text without NUL bytes (`what` names what it should be).
std::string kernelText(const TuningProblem& problem, const char* what) {
    const std::filesystem::path path = problem.kernelPath();
    if (const std::string why = sourceFileProblem(path); !why.empty())
        throw InputError(problem.fileName, kKernelField, "the kernel file '" + path.string() + "' " + why);
    std::string why;
    std::optional<std::string> text = readSource(path, why);
    if (!text)
        throw InputError(problem.fileName, kKernelField, "cannot read the kernel file '" + path.string() + "': " + why);
    if (const std::string bad = sourceTextProblem(*text, what); !bad.empty())
        throw InputError(problem.fileName, kKernelField, "the kernel file '" + path.string() + "' " + bad);
    return std::move(*text);
}

// A value as a Triton call passes it, as JSON: an integer, a float, a boolean or a string.
std::string jsonValue(const expr::Value& value) {
    switch (value.kind) {
    case expr::Kind::Int:
        return nlohmann::json(value.i).dump();
    case expr::Kind::Bool:
        return value.i ? "true" : "false";
    case expr::Kind::Float:
        return nlohmann::json(value.f).dump();
    case expr::Kind::Str:
        return nlohmann::json(*value.s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    case expr::Kind::List:
        break;
    }
    return nlohmann::json(expr::repr(value)).dump();
}

// A scalar argument's value as the call passes it: a Python int for the integer types (exact,
// from the bytes the worker passes), a float for the floating ones, a bool for bool.
std::string scalarJson(const ArgumentSpec& a) {
    auto bytesAs = [&](auto zero) {
        decltype(zero) v{};
        std::memcpy(&v, a.scalarBytes.data(), sizeof v);
        return v;
    };
    switch (a.element) {
    case ElementType::Bool:
        return a.scalarValue != 0 ? "true" : "false";
    case ElementType::Int8:
        return std::to_string(bytesAs(std::int8_t{}));
    case ElementType::UInt8:
        return std::to_string(bytesAs(std::uint8_t{}));
    case ElementType::Int16:
        return std::to_string(bytesAs(std::int16_t{}));
    case ElementType::UInt16:
        return std::to_string(bytesAs(std::uint16_t{}));
    case ElementType::Int32:
        return std::to_string(bytesAs(std::int32_t{}));
    case ElementType::UInt32:
        return std::to_string(bytesAs(std::uint32_t{}));
    case ElementType::Int64:
        return std::to_string(bytesAs(std::int64_t{}));
    case ElementType::UInt64:
        return std::to_string(bytesAs(std::uint64_t{}));
    default:
        break;
    }
    const double v = a.scalarValue;
    // A float stays a float in JSON ("2.0"), so that Python sees a float as a call would pass it.
    return std::isfinite(v) ? nlohmann::json(v).dump() : nlohmann::json(std::to_string(v)).dump();
}

} // namespace

void RequestBuilder::buildTriton(const TuningProblem& problem, std::size_t shapeIndex) {
    std::string source = kernelText(problem, "Python source");
    const TritonFunction kernel = checkTritonKernel(problem, source);
    const TritonSetup& setup = tritonSetup();
    if (!setup.ok)
        throw InputError(problem.fileName, "/KernelSpecification/Language",
                         "the kernel is a Triton kernel, and " + setup.error);
    const std::filesystem::path path = problem.kernelPath();
    m_triton = true;
    m_base.language = SourceLanguage::Triton;
    m_base.source = std::move(source);
    m_base.sourceName = path.filename().string();
    m_base.kernelName = problem.kernelName;
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::absolute(path, ec).parent_path();
    if (!ec && !dir.empty())
        m_base.includeDirs.push_back(dir.string());

    // The call's arguments at the shape: what Triton's JIT specialises on.
    const LaunchPlanner plan(problem, shapeIndex);
    for (const ArgumentSpec& a : plan.arguments()) {
        if (a.isTensorMap())
            throw InputError(problem.fileName, "/KernelSpecification/Arguments/" + std::to_string(a.index),
                             a.label() + " is a TMA tensor map, which a Triton kernel does not take (Triton builds "
                                         "its own descriptors)");
        if (a.isVector())
            m_base.arguments.push_back(nlohmann::json{{"pointer", std::string(tritonTypeName(a.element))}}.dump());
        else
            m_base.arguments.push_back(scalarJson(a));
    }
    // tl.constexpr parameters valued by a shape dim of their name.
    const Shape* shape = problem.shapes.empty() ? nullptr : &problem.shapes.at(shapeIndex);
    for (const TritonParameter& p : kernel.parameters) {
        if (!p.isConstexpr || problem.parameterIndex(p.name) >= 0 || !shape)
            continue;
        for (const auto& [name, value] : shape->dims)
            if (name == p.name)
                m_shapeKeywords.emplace_back(name, nlohmann::json(value).dump());
    }
    for (const TuningParameter& parameter : problem.parameters) {
        m_names.push_back(parameter.name);
        std::vector<std::string> texts;
        for (const expr::Value& value : parameter.values)
            texts.push_back(jsonValue(value));
        m_texts.push_back(std::move(texts));
        m_isText.emplace_back(parameter.values.size(), false);
    }
}

RequestBuilder::RequestBuilder(const TuningProblem& problem, std::size_t shapeIndex) {
    if (problem.isTriton()) {
        buildTriton(problem, shapeIndex);
        return;
    }
    // NVRTC compiles CUDA C++ only: OpenCL or HIP source would come back as a pile of compile errors
    // about the source, or compile as something it is not.
    if (!problem.isCuda())
        throw InputError(problem.fileName, "/KernelSpecification/Language",
                         "the kernel is " +
                             (problem.language.empty() ? std::string("of no language") : problem.language) +
                             ", and NVRTC compiles CUDA kernels only (Language \"CUDA\")");
    const std::filesystem::path path = problem.kernelPath();
    if (const std::string why = sourceFileProblem(path); !why.empty())
        throw InputError(problem.fileName, kKernelField, "the kernel file '" + path.string() + "' " + why);
    std::string why;
    std::optional<std::string> text = readSource(path, why);
    if (!text)
        throw InputError(problem.fileName, kKernelField, "cannot read the kernel file '" + path.string() + "': " + why);
    // What NVRTC would get is checked first: a file that is no CUDA source (KernelFile naming a
    // log, a binary, /etc/passwd) is refused here, so its contents never reach NVRTC's log, which
    // the results keep.
    if (const std::string bad = sourceTextProblem(*text); !bad.empty())
        throw InputError(problem.fileName, kKernelField, "the kernel file '" + path.string() + "' " + bad);

    m_base.source = std::move(*text);
    // The file name alone: diagnostics read "sgemm.cu(12): error ...", and the cache key (which
    // covers the name) stays the same wherever the checkout lives.
    m_base.sourceName = path.filename().string();
    m_base.kernelName = problem.kernelName;
    m_base.options = problem.compilerOptions;
    if (problem.usesNvcc())
        useNvcc(problem, path);
    // Every compile carries line information: line tables only, the same code (so a config's
    // machine code can be read by source line, and memcheck names lines), in the cache key.
    if (std::find(m_base.options.begin(), m_base.options.end(), kLineInfoOption) == m_base.options.end() &&
        std::find(m_base.options.begin(), m_base.options.end(), "-lineinfo") == m_base.options.end())
        m_base.options.emplace_back(kLineInfoOption);
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::absolute(path, ec).parent_path();
    if (!ec && !dir.empty())
        m_base.includeDirs.push_back(dir.string());
    // A relative -I names a folder of the problem's: the compilers would look for it from the
    // folder Tilescope runs in, so it is given from the problem's folder too (the option stays as
    // written; the cache key covers what the headers hold, not where they are).
    if (!problem.baseDir.empty()) {
        std::vector<fs::path> optionDirs;
        std::vector<std::string> unused;
        includeOptions(m_base.options, optionDirs, unused);
        for (const fs::path& d : optionDirs) {
            if (d.empty() || !d.is_relative())
                continue;
            const fs::path resolved = (fs::absolute(problem.baseDir, ec) / d).lexically_normal();
            if (!ec && fs::is_directory(resolved, ec))
                m_base.includeDirs.push_back(resolved.string());
        }
    }
    std::vector<fs::path> includeDirs(m_base.includeDirs.begin(), m_base.includeDirs.end());
    std::vector<std::string> preIncludes;
    includeOptions(m_base.options, includeDirs, preIncludes);
    const std::vector<std::string> sources =
        checkIncludes(problem.fileName, path, m_base.source, includeDirs, preIncludes);
    if (problem.usesNvcc()) {
        if (const std::string missing = missingNvccHeader(path, m_base.source, includeDirs); !missing.empty())
            throw InputError(problem.fileName, kKernelField, missing);
    }
    // A kernel is a __global__ function, in the file or a header it includes: a file with none is
    // not CUDA kernel source. (One that does not define KernelName compiles to NoKernel, which
    // the session's failure watch names.)
    const bool anyKernel = std::any_of(sources.begin(), sources.end(),
                                       [](const std::string& t) { return RequestBuilder::mentions(t, "__global__"); });
    if (!anyKernel)
        throw InputError(problem.fileName, kKernelField,
                         "the kernel file '" + path.string() +
                             "' has no __global__ function, so it is not CUDA kernel source (KernelFile names the "
                             "file that defines the kernel KernelName '" +
                             problem.kernelName + "')");

    static constexpr std::array<const char*, 3> kBlockNames{"block_size_x", "block_size_y", "block_size_z"};
    for (const TuningParameter& parameter : problem.parameters) {
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if (parameter.name == kBlockNames[axis])
                m_blockParameter[axis] = static_cast<int>(m_names.size());
        }
        m_names.push_back(parameter.name);
        std::vector<std::string> texts;
        std::vector<bool> isText;
        texts.reserve(parameter.values.size());
        for (const expr::Value& value : parameter.values) {
            texts.push_back(defineValue(value));
            isText.push_back(value.kind == expr::Kind::Str);
        }
        m_texts.push_back(std::move(texts));
        m_isText.push_back(std::move(isText));
    }
    // The grid and the block Kernel Tuner defines are the launch's; a problem whose launch cannot
    // be planned (no ProblemSize or GlobalSize, an expression that fails) still compiles, without
    // grid_size_x/y/z, as it did before they were defined.
    try {
        m_geometry = std::make_unique<GeometryPlanner>(problem, shapeIndex);
    } catch (const std::exception&) {
        m_geometry.reset();
    }
    // block_size_x/y/z that are neither parameters nor shape names: Kernel Tuner's defaults.
    for (const auto& [name, value] : problem.implicitBlockSizes()) {
        for (std::size_t axis = 0; axis < 3; ++axis) {
            if (name == kBlockNames[axis])
                m_implicitBlock[axis] = value;
        }
    }
}

void RequestBuilder::useNvcc(const TuningProblem& problem, const std::filesystem::path& kernel) {
    const NvccSetup& setup = nvccSetup();
    if (!setup.ok)
        throw InputError(problem.fileName, "/Tilescope/Compiler", "the problem asks for nvcc, and " + setup.error);
    m_base.compiler = CudaCompiler::Nvcc;
    // Options name folders of this machine through the environment ("-I${CUTLASS_DIR}/include"); a
    // folder so named must be there.
    for (std::size_t i = 0; i < m_base.options.size(); ++i) {
        const std::string field = "/KernelSpecification/CompilerOptions/" + std::to_string(i);
        std::string& option = m_base.options[i];
        if (option.find('$') == std::string::npos)
            continue;
        std::string error;
        std::string expanded = expandEnvironment(option, &error);
        if (!error.empty())
            throw InputError(problem.fileName, field, error + " (" + kernel.filename().string() + " needs it)");
        if (expanded.rfind("-I", 0) == 0 && expanded.size() > 2) {
            std::error_code ec;
            if (!std::filesystem::is_directory(expanded.substr(2), ec))
                throw InputError(problem.fileName, field,
                                 "'" + option + "' is '" + expanded + "', and " + expanded.substr(2) +
                                     " is not a folder: set the variable to the folder that holds the headers");
        }
        option = std::move(expanded);
    }
}

RequestBuilder::~RequestBuilder() = default;
RequestBuilder::RequestBuilder(RequestBuilder&&) noexcept = default;

bool RequestBuilder::mentions(std::string_view source, std::string_view identifier) {
    auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (std::size_t at = source.find(identifier); at != std::string_view::npos; at = source.find(identifier, at + 1)) {
        const std::size_t end = at + identifier.size();
        if ((at == 0 || !isWord(source[at - 1])) && (end >= source.size() || !isWord(source[end])))
            return true;
    }
    return false;
}

Defines RequestBuilder::parameterValues(const Config& config) const {
    Defines result;
    result.reserve(m_names.size());
    for (std::size_t p = 0; p < m_names.size() && p < config.size(); ++p)
        result.emplace_back(m_names[p], m_texts[p].at(config[p]));
    return result;
}

Defines RequestBuilder::defines(const Config& config) const {
    if (m_triton) {
        // A Triton call's keywords: the tuning parameters' values, then the tl.constexpr values
        // the shape gives.
        Defines keywords = parameterValues(config);
        keywords.insert(keywords.end(), m_shapeKeywords.begin(), m_shapeKeywords.end());
        return keywords;
    }
    static constexpr std::array<const char*, 3> kGridNames{"grid_size_x", "grid_size_y", "grid_size_z"};
    static constexpr std::array<const char*, 3> kBlockNames{"block_size_x", "block_size_y", "block_size_z"};
    const Defines parameters = parameterValues(config);
    Defines result;
    result.reserve(parameters.size() + 7);
    std::optional<LaunchGeometry> launch;
    if (m_geometry) {
        if (LaunchGeometry g = m_geometry->plan(config); g.ok())
            launch = std::move(g);
    }
    if (launch) {
        for (std::size_t axis = 0; axis < 3; ++axis)
            result.emplace_back(kGridNames[axis], std::to_string(launch->grid[axis]));
    }
    // Kernel Tuner's dict: the block's names first, a tuned one keeping its place with its value.
    for (std::size_t axis = 0; axis < 3; ++axis) {
        if (const int p = m_blockParameter[axis]; p >= 0 && static_cast<std::size_t>(p) < parameters.size())
            result.push_back(parameters[static_cast<std::size_t>(p)]);
        else if (m_implicitBlock[axis] > 0)
            result.emplace_back(kBlockNames[axis],
                                std::to_string(launch ? launch->block[axis] : m_implicitBlock[axis]));
    }
    for (std::size_t p = 0; p < parameters.size(); ++p) {
        if (std::find(m_blockParameter.begin(), m_blockParameter.end(), static_cast<int>(p)) != m_blockParameter.end())
            continue;
        // A string value that names parameters has their values in their place, as Kernel Tuner has.
        if (m_isText[p].at(config[p]))
            result.emplace_back(parameters[p].first, replaceParameterNames(parameters[p].second, parameters));
        else
            result.push_back(parameters[p]);
    }
    result.emplace_back("kernel_tuner", "1");
    return result;
}

std::string RequestBuilder::kernelName(const Config& config) const {
    if (m_triton)
        return m_base.kernelName;
    return replaceParameterNames(m_base.kernelName, parameterValues(config));
}

std::string RequestBuilder::preparedSource(const Config& config) const {
    if (m_triton)
        return m_base.source; // a Triton kernel gets its values as a call's, not in its text
    return prepareKernelSource(m_base.source, defines(config));
}

CompileRequest RequestBuilder::request(const Config& config, const std::string& arch) const {
    CompileRequest request = m_base;
    request.defines = defines(config);
    request.kernelName = kernelName(config);
    request.arch = arch;
    return request;
}

} // namespace tilescope
