#include "tuner/backendspec.h"

#include "base/error.h"
#include "compile/compilecache.h"
#include "measure/analysis/analysisbackend.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace tilescope {

namespace {

std::string trimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos)
        return {};
    const auto last = text.find_last_not_of(" \t");
    return std::string(text.substr(first, last - first + 1));
}

bool startsWith(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

} // namespace

std::vector<int> parseDeviceList(std::string_view text, const std::string& field) {
    std::vector<int> devices;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = text.find(',', start);
        const std::string piece =
            trimmed(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        if (!piece.empty()) {
            int value = -1;
            const auto [ptr, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), value);
            if (ec != std::errc{} || ptr != piece.data() + piece.size() || value < 0)
                throw InputError("", field, "'" + piece + "' is not a device number (expected e.g. 0 or 0,1,2)");
            if (std::find(devices.begin(), devices.end(), value) != devices.end())
                throw InputError("", field, "device " + piece + " is listed twice");
            devices.push_back(value);
        }
        if (comma == std::string_view::npos)
            break;
        start = comma + 1;
    }
    if (devices.empty())
        throw InputError("", field, "no device given (expected e.g. 0 or 0,1,2)");
    return devices;
}

BackendSpec parseBackendSpec(std::string_view text, const std::string& field) {
    BackendSpec spec;
    if (startsWith(text, "replay:")) {
        spec.kind = BackendSpec::Kind::Replay;
        spec.recording = std::string(text.substr(7));
        if (spec.recording.empty())
            throw InputError("", field, "replay needs a recording: replay:FILE");
    } else if (text == "cuda") {
        spec.kind = BackendSpec::Kind::Cuda;
        spec.devices = {0};
    } else if (startsWith(text, "cuda:")) {
        spec.kind = BackendSpec::Kind::Cuda;
        spec.devices = parseDeviceList(text.substr(5), field);
    } else if (startsWith(text, "ssh://")) {
        spec.kind = BackendSpec::Kind::Cuda;
        std::string_view rest = text.substr(6);
        const std::size_t slash = rest.find('/');
        std::string_view where = rest.substr(0, slash);
        spec.devices = slash == std::string_view::npos || trimmed(rest.substr(slash + 1)).empty()
                           ? std::vector<int>{0}
                           : parseDeviceList(rest.substr(slash + 1), field);
        const std::size_t at = where.rfind('@');
        const std::size_t colon = where.find(':', at == std::string_view::npos ? 0 : at);
        if (colon != std::string_view::npos) {
            int port = 0;
            const std::string_view digits = where.substr(colon + 1);
            const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
            if (ec != std::errc{} || ptr != digits.data() + digits.size() || port <= 0 || port > 65535)
                throw InputError("", field, "'" + std::string(digits) + "' is not a port (ssh://user@host:22/0)");
            spec.port = port;
            where = where.substr(0, colon);
        }
        spec.host = trimmed(where);
        const std::size_t hostStart = at == std::string_view::npos ? 0 : at + 1;
        if (spec.host.empty() || hostStart >= spec.host.size() ||
            spec.host.find_first_of(" \t'\"\\;|&$`") != std::string::npos || spec.host.front() == '-')
            throw InputError("", field, "ssh needs a host: ssh://user@host/0,1 (got '" + std::string(text) + "')");
    } else if (startsWith(text, "analysis:")) {
        spec.kind = BackendSpec::Kind::Analysis;
        spec.arch = trimmed(text.substr(9));
        if (spec.arch.empty())
            throw InputError("", field, "analysis needs an arch: analysis:sm_90");
    } else {
        throw InputError("", field,
                         "unknown backend '" + std::string(text) +
                             "' (known: cuda, cuda:DEVICES, ssh://USER@HOST/DEVICES, replay:FILE, analysis:ARCH)");
    }
    return spec;
}

std::string BackendSpec::label() const {
    switch (kind) {
    case Kind::Replay: {
        std::error_code ec;
        const std::filesystem::path canonical = std::filesystem::weakly_canonical(recording, ec);
        return "replay:" + (ec ? recording.string() : canonical.string());
    }
    case Kind::Cuda: {
        std::string text = host.empty() ? "cuda:" : "ssh://" + host + (port ? ":" + std::to_string(port) : "") + "/";
        for (std::size_t i = 0; i < devices.size(); ++i)
            text += (i ? "," : "") + std::to_string(devices[i]);
        return text;
    }
    case Kind::Analysis:
        return "analysis:" + arch;
    }
    return {};
}

std::vector<std::string> BackendSpec::launcher() const {
    if (kind != Kind::Cuda || host.empty())
        return {};
    const char* ssh = std::getenv("TILESCOPE_SSH");
    std::vector<std::string> words = ssh && *ssh ? splitCommand(ssh, "TILESCOPE_SSH") : std::vector<std::string>{"ssh"};
    words.insert(words.end(), {"-T", "-o", "BatchMode=yes"});
    if (port)
        words.insert(words.end(), {"-p", std::to_string(port)});
    words.push_back(host);
    return words;
}

std::unique_ptr<Backend> makeBackend(const BackendSpec& spec, BackendOptions options) {
    switch (spec.kind) {
    case BackendSpec::Kind::Replay:
        return std::make_unique<ReplayBackend>(spec.recording, std::move(options.replay));
    case BackendSpec::Kind::Cuda:
        options.cuda.devices = spec.devices;
        if (options.cuda.launcher.empty())
            options.cuda.launcher = spec.launcher(); // ssh://: the GPUs of another machine
        return std::make_unique<CudaBackend>(std::move(options.cuda));
    case BackendSpec::Kind::Analysis:
        return std::make_unique<AnalysisBackend>(spec.arch);
    }
    return nullptr;
}

std::optional<CompileServiceOptions> compileServiceOptions(const BackendSpec& spec, unsigned jobs, bool useCache,
                                                           const std::filesystem::path& cacheDirectory) {
    if (!spec.compiles())
        return std::nullopt;
    std::shared_ptr<CompileCache> cache;
    if (useCache) {
        CompileCacheOptions cacheOptions;
        cacheOptions.directory = cacheDirectory;
        cache = std::make_shared<CompileCache>(cacheOptions);
    }
    return CompileServiceOptions{jobs, cache};
}

std::unique_ptr<CompileService> makeCompileService(const BackendSpec& spec, unsigned jobs, bool useCache,
                                                   const std::filesystem::path& cacheDirectory) {
    std::optional<CompileServiceOptions> options = compileServiceOptions(spec, jobs, useCache, cacheDirectory);
    return options ? std::make_unique<CompileService>(std::move(*options)) : nullptr;
}

std::vector<std::string> splitCommand(std::string_view text, const std::string& field) {
    std::vector<std::string> words;
    std::string word;
    bool inWord = false;
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quote) {
            if (c == quote)
                quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < text.size())
                word += text[++i];
            else
                word += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            inWord = true;
        } else if (c == '\\' && i + 1 < text.size()) {
            word += text[++i];
            inWord = true;
        } else if (c == ' ' || c == '\t') {
            if (inWord)
                words.push_back(std::move(word));
            word.clear();
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (quote)
        throw InputError("", field, "an unterminated quote in '" + std::string(text) + "'");
    if (inWord)
        words.push_back(std::move(word));
    return words;
}

} // namespace tilescope
